-- name: EmailMailboxPause :one
-- Pauses (until $2) or disables ($2 NULL) a mailbox.
UPDATE mailboxes
SET paused_until = $2,
    pause_reason = $3,
    status       = CASE WHEN $2::timestamptz IS NULL THEN 'disabled' ELSE status END,
    updated_at   = now()
WHERE id = $1
RETURNING workspace_id, address;
