-- name: InboxClaim :one
-- Leases one mailbox's inbox ($2 for tick $3): the one read longest ago,
-- not leased by another tick and not read since this tick started ($1), so
-- a tick visits each mailbox at most once and ticks on several hosts split
-- the mailboxes between them.
UPDATE inbox_checkpoints c
SET locked_until = now() + sqlc.arg(lease)::interval, locked_by = sqlc.arg(tick_id)::text
FROM mailboxes m
WHERE m.id = c.mailbox_id
  AND c.mailbox_id = (
    SELECT c2.mailbox_id
    FROM inbox_checkpoints c2
    JOIN mailboxes m2 ON m2.id = c2.mailbox_id
    WHERE m2.imap_url IS NOT NULL
      AND (c2.locked_until IS NULL OR c2.locked_until < now())
      AND (c2.checked_at IS NULL OR c2.checked_at < sqlc.arg(checked_before)::timestamptz)
    ORDER BY c2.checked_at NULLS FIRST, c2.mailbox_id
    LIMIT 1
    FOR UPDATE OF c2 SKIP LOCKED)
RETURNING c.mailbox_id, m.workspace_id, c.uid_validity, c.last_uid, c.read_through;
