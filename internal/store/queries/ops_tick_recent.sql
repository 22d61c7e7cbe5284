-- name: OpsTickRecent :many
-- The most recent finished ticks of a kind before now, newest first: their
-- spacing is the cadence and their claims the per-tick throughput.
SELECT r.started_at, r.claimed
FROM tick_runs r
WHERE r.kind = sqlc.arg(kind) AND r.started_at <= sqlc.arg(now) AND r.exit_status = 0
ORDER BY r.started_at DESC
LIMIT sqlc.arg(max);
