-- name: EmailMailboxPause :one
-- Pauses a mailbox until $2. The ticks never disable one (status stays as
-- it is): an operator's fix is picked up once the pause ends.
UPDATE mailboxes
SET paused_until = sqlc.arg(paused_until),
    pause_reason = sqlc.arg(pause_reason),
    updated_at   = now()
WHERE id = sqlc.arg(id)
RETURNING workspace_id, address;
