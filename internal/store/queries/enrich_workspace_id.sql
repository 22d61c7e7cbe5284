-- name: EnrichWorkspaceId :one
SELECT id FROM workspaces WHERE name = $1;
