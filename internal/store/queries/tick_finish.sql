-- name: TickFinish :exec
-- Records a tick's outcome: counts is a JSON object of outcome counts.
UPDATE tick_runs
SET finished_at = now(), claimed = sqlc.arg(claimed), counts = sqlc.arg(counts), exit_status = sqlc.arg(exit_status), error = sqlc.arg(error)
WHERE tick_id = sqlc.arg(tick_id);
