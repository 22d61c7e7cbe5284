-- name: EmailMailboxPause :one
-- Pauses a mailbox until $2. The ticks never disable one (status stays as
-- it is): an operator's fix is picked up once the pause ends.
UPDATE mailboxes
SET paused_until = $2,
    pause_reason = $3,
    updated_at   = now()
WHERE id = $1
RETURNING workspace_id, address;
