-- name: OpsBreakers :many
-- Every breaker row, optionally of one workspace.
SELECT b.workspace_id, w.name AS workspace, b.provider, b.state, b.open_until, coalesce(b.reason, '') AS reason, b.opened_at
FROM breakers b
JOIN workspaces w ON w.id = b.workspace_id
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR b.workspace_id = sqlc.narg(workspace_id))
ORDER BY w.name, b.provider;
