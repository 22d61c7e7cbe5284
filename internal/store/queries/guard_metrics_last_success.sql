-- name: GuardMetricsLastSuccess :one
-- When a tick of kind $1 last finished successfully, on any host; no row
-- when never.
SELECT finished_at FROM tick_runs
WHERE kind = sqlc.arg(kind)::text AND exit_status = 0 AND finished_at IS NOT NULL
ORDER BY finished_at DESC
LIMIT 1;
