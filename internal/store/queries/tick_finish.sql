-- name: TickFinish :exec
-- Records a tick's outcome: counts is a JSON object of outcome counts.
UPDATE tick_runs
SET finished_at = now(), claimed = $2, counts = $3, exit_status = $4, error = $5
WHERE tick_id = $1;
