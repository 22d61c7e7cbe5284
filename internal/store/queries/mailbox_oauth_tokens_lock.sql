-- name: MailboxOAuthTokensLock :many
-- Every mailbox's sealed tokens, locked, for `secrets rotate`.
SELECT t.mailbox_id, m.address, t.refresh_sealed, t.access_sealed, t.master_key_id
FROM mailbox_oauth_tokens t
JOIN mailboxes m ON m.id = t.mailbox_id
ORDER BY t.mailbox_id
FOR UPDATE OF t;
