-- name: OpsCampaignByName :many
-- Campaigns by name, optionally within one workspace ($2 NULL: any). More
-- than one row means the name is ambiguous without --workspace.
SELECT c.id, w.name
FROM campaigns c
JOIN workspaces w ON w.id = c.workspace_id
WHERE c.name = $1
  AND ($2::bigint IS NULL OR c.workspace_id = $2)
ORDER BY w.name;
