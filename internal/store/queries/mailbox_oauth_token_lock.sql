-- name: MailboxOAuthTokenLock :many
-- The same row, locked: the one refresh per expiry is made under it, and
-- whoever waited reads the token it left.
SELECT mailbox_id, refresh_sealed, access_sealed, access_expiry, master_key_id, revoked_at
FROM mailbox_oauth_tokens
WHERE mailbox_id = sqlc.arg(mailbox_id)
FOR UPDATE;
