-- name: GuardWorkspaceByName :one
-- $1 workspace name.
SELECT id FROM workspaces WHERE name = $1::text;
