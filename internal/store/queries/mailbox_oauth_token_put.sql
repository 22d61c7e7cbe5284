-- name: MailboxOAuthTokenPut :exec
-- Stores what `mailbox authorize` obtained: a new grant replaces the old
-- one and ends a revoked episode; the cached access token is the new one.
INSERT INTO mailbox_oauth_tokens (mailbox_id, refresh_sealed, access_sealed, access_expiry, master_key_id)
VALUES (sqlc.arg(mailbox_id), sqlc.arg(refresh_sealed), sqlc.narg(access_sealed), sqlc.narg(access_expiry), sqlc.arg(master_key_id))
ON CONFLICT (mailbox_id) DO UPDATE
SET refresh_sealed = EXCLUDED.refresh_sealed,
    access_sealed  = EXCLUDED.access_sealed,
    access_expiry  = EXCLUDED.access_expiry,
    master_key_id  = EXCLUDED.master_key_id,
    revoked_at     = NULL,
    authorized_at  = now(),
    updated_at     = now();
