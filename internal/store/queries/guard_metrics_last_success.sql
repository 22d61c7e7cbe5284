-- name: GuardMetricsLastSuccess :one
-- When a tick of kind $1 last finished successfully, on any host.
SELECT max(finished_at) FROM tick_runs WHERE kind = $1::text AND exit_status = 0;
