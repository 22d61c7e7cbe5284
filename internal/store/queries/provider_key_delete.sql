-- name: ProviderKeyDelete :execrows
-- Drop a workspace's own key for a provider: it falls back to the host's.
DELETE FROM workspace_provider_keys
WHERE workspace_id = sqlc.arg(workspace_id) AND provider = sqlc.arg(provider);
