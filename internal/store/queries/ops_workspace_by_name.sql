-- name: OpsWorkspaceByName :one
-- A workspace by name: status, requeue and why filters resolve names to ids
-- once, so the big scans filter on the indexed id.
SELECT id, name, monthly_usd_ceiling AS ceiling_usd
FROM workspaces
WHERE name = $1;
