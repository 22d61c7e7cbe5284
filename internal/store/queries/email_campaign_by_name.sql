-- name: EmailCampaignByName :one
-- Finds a campaign by workspace and campaign name.
SELECT c.id, c.workspace_id
FROM campaigns c
JOIN workspaces w ON w.id = c.workspace_id
WHERE w.name = $1 AND c.name = $2;
