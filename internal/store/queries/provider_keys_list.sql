-- name: ProviderKeysList :many
-- Every workspace's own sealed provider key, with the workspace's name.
SELECT k.workspace_id, w.name AS workspace, k.provider, k.ciphertext, k.master_key_id
FROM workspace_provider_keys k
JOIN workspaces w ON w.id = k.workspace_id
ORDER BY w.name, k.provider;
