-- name: OpsTickRecent :many
-- The most recent finished ticks of kind $1 before $2, newest first: their
-- spacing is the cadence and their claims the per-tick throughput.
SELECT r.started_at, r.claimed
FROM tick_runs r
WHERE r.kind = $1 AND r.started_at <= $2 AND r.exit_status = 0
ORDER BY r.started_at DESC
LIMIT $3;
