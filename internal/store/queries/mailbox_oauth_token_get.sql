-- name: MailboxOAuthTokenGet :many
-- A mailbox's tokens, read without a lock: the cached access token serves
-- while it is fresh (no row: never authorized).
SELECT mailbox_id, refresh_sealed, access_sealed, access_expiry, master_key_id, revoked_at
FROM mailbox_oauth_tokens
WHERE mailbox_id = sqlc.arg(mailbox_id);
