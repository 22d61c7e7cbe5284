-- name: CreditsList :many
-- Every provider account's last credits reading, with the workspace that
-- owns the key ('' for the host's key).
SELECT p.account, p.provider, p.workspace_id, coalesce(w.name, '') AS workspace, p.credits, p.reset_at,
       p.read_at, p.credits_at, p.read_error, p.low, p.episode
FROM provider_credits p
LEFT JOIN workspaces w ON w.id = p.workspace_id
ORDER BY p.account;
