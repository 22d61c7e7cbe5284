-- name: GuardBreakerList :many
-- Every breaker with its workspace name; an expired open breaker shows as
-- such (the next caller probes it).
SELECT w.name, b.workspace_id, b.provider, b.state, b.open_until, b.reason,
       b.consecutive_failures, b.probe_owner, b.probe_until, b.opened_at, b.episode, b.updated_at
FROM breakers b
JOIN workspaces w ON w.id = b.workspace_id
ORDER BY w.name, b.provider;
