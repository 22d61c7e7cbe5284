-- name: WorkspaceNames :many
-- The names of the workspaces ids, sorted.
SELECT name FROM workspaces WHERE id = ANY (sqlc.arg(ids)::bigint[]) ORDER BY name;
