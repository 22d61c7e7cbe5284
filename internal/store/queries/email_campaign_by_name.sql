-- name: EmailCampaignByName :one
-- Finds a campaign by workspace and campaign name.
SELECT c.id, c.workspace_id
FROM campaigns c
JOIN workspaces w ON w.id = c.workspace_id
WHERE w.name = sqlc.arg(workspace) AND c.name = sqlc.arg(campaign);
