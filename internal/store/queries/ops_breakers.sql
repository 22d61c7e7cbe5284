-- name: OpsBreakers :many
-- Every breaker row, optionally of one workspace.
SELECT b.workspace_id, w.name, b.provider, b.state, b.open_until, coalesce(b.reason, ''), b.opened_at
FROM breakers b
JOIN workspaces w ON w.id = b.workspace_id
WHERE ($1::bigint IS NULL OR b.workspace_id = $1)
ORDER BY w.name, b.provider;
