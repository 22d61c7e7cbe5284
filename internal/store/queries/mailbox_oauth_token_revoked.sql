-- name: MailboxOAuthTokenRevoked :execrows
-- Marks the grant revoked (the provider said invalid_grant); 1 only for the
-- first report of the episode, so one event is written per episode.
UPDATE mailbox_oauth_tokens
SET revoked_at = now(), access_sealed = NULL, access_expiry = NULL, updated_at = now()
WHERE mailbox_id = sqlc.arg(mailbox_id) AND revoked_at IS NULL;
