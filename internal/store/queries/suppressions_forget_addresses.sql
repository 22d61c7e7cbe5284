-- name: SuppressionsForgetAddresses :many
-- Deletes the suppression rows that hold the address itself (found by its
-- hash), in one workspace or all, returning their workspaces; the hash is
-- kept by a hash-only row (store.Suppress).
DELETE FROM suppressions
WHERE email_sha256 = sqlc.arg(email_sha256)::bytea AND email IS NOT NULL
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR workspace_id = sqlc.narg(workspace_id)::bigint)
RETURNING workspace_id;
