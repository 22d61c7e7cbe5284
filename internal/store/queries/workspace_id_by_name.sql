-- name: WorkspaceIDByName :one
-- The one lookup of a workspace by name: the enrich tick's --workspace,
-- breaker open/reset, and the status, requeue and why filters resolve a
-- name to its id once, so the big scans filter on the indexed id.
SELECT id FROM workspaces WHERE name = sqlc.arg(name)::text;
