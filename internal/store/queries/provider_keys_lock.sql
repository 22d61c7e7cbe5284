-- name: ProviderKeysLock :many
-- Every sealed provider key, locked for a rotation's transaction.
SELECT k.workspace_id, k.provider, k.ciphertext, k.master_key_id
FROM workspace_provider_keys k
ORDER BY k.workspace_id, k.provider
FOR UPDATE;
