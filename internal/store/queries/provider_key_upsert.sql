-- name: ProviderKeyUpsert :exec
-- Store (or replace) a workspace's sealed key for a provider.
INSERT INTO workspace_provider_keys (workspace_id, provider, ciphertext, master_key_id)
VALUES (sqlc.arg(workspace_id), sqlc.arg(provider), sqlc.arg(ciphertext), sqlc.arg(master_key_id))
ON CONFLICT (workspace_id, provider) DO UPDATE SET
    ciphertext    = excluded.ciphertext,
    master_key_id = excluded.master_key_id,
    updated_at    = now();
