-- name: MailboxOAuthTokenRevoked :one
-- Marks the grant revoked (the provider said invalid_grant) and returns
-- when the episode began: its first report sets it, later ones keep it, so
-- the episode's one event is keyed by it.
UPDATE mailbox_oauth_tokens
SET revoked_at = coalesce(revoked_at, now()), access_sealed = NULL, access_expiry = NULL, updated_at = now()
WHERE mailbox_id = sqlc.arg(mailbox_id)
RETURNING revoked_at::timestamptz;
