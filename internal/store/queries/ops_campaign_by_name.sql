-- name: OpsCampaignByName :many
-- Campaigns by name, optionally within one workspace (NULL: any). More
-- than one row means the name is ambiguous without --workspace.
SELECT c.id, w.name AS workspace
FROM campaigns c
JOIN workspaces w ON w.id = c.workspace_id
WHERE c.name = sqlc.arg(name)
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR c.workspace_id = sqlc.narg(workspace_id))
ORDER BY w.name;
