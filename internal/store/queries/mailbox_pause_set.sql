-- name: MailboxPauseSet :one
-- An operator's pause (paused_until in the future) or resume (both NULL)
-- of mailbox id. Returns the pause it replaced, for the audit log and the
-- command's answer. The row lock orders it with a tick pausing the same
-- mailbox: whichever commits last wins, and each sees the other's row.
WITH before AS (
    SELECT x.id, x.paused_until, x.pause_reason
    FROM mailboxes x
    WHERE x.id = sqlc.arg(id)::bigint
    FOR UPDATE
)
UPDATE mailboxes m
SET paused_until = sqlc.narg(paused_until),
    pause_reason = sqlc.narg(pause_reason),
    updated_at   = now()
FROM before b
WHERE m.id = b.id
RETURNING b.paused_until AS was_paused_until, coalesce(b.pause_reason, '')::text AS was_pause_reason;
