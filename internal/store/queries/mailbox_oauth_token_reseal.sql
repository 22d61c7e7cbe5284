-- name: MailboxOAuthTokenReseal :exec
-- Stores a mailbox's tokens sealed under another master key.
UPDATE mailbox_oauth_tokens
SET refresh_sealed = sqlc.arg(refresh_sealed), access_sealed = sqlc.narg(access_sealed),
    master_key_id = sqlc.arg(master_key_id), updated_at = now()
WHERE mailbox_id = sqlc.arg(mailbox_id);
