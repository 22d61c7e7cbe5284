-- name: MailboxOAuthTokenRefused :execrows
-- Forgets the cached access token a mail server refused, so the next login
-- refreshes it. Only that token: a match on its sealed bytes leaves one
-- another tick refreshed since.
UPDATE mailbox_oauth_tokens
SET access_sealed = NULL,
    access_expiry = NULL,
    updated_at    = now()
WHERE mailbox_id = sqlc.arg(mailbox_id)
  AND access_sealed = sqlc.arg(access_sealed)::bytea;
