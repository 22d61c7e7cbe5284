-- name: MailboxOAuthTokenRefreshed :exec
-- Records a refresh: the new access token and its expiry, and the refresh
-- token (the provider may have rotated it).
UPDATE mailbox_oauth_tokens
SET access_sealed  = sqlc.arg(access_sealed),
    access_expiry  = sqlc.arg(access_expiry),
    refresh_sealed = sqlc.arg(refresh_sealed),
    refreshes      = refreshes + 1,
    updated_at     = now()
WHERE mailbox_id = sqlc.arg(mailbox_id);
