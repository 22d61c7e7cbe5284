-- name: PruneWindowStarts :many
-- Where each mailbox's bounce-rate window begins: its window-th newest send
-- that reached a server, counted as email_mailbox_bounces.sql counts them.
-- Prune keeps the sends from there on, however old (a mailbox that sends
-- little reaches back months); a mailbox with fewer has no row here and
-- keeps them all. Read once per prune run: newer sends since only move a
-- window forward, so the run keeps a little more, never less.
SELECT m.id AS mailbox_id, b.created_at, b.id
FROM mailboxes m
CROSS JOIN LATERAL (
    SELECT s.created_at, s.id
    FROM sends s
    WHERE s.mailbox_id = m.id
      AND (s.status IN ('sent', 'delivery_unknown') OR s.bounced_at IS NOT NULL)
    ORDER BY s.created_at DESC, s.id DESC
    OFFSET sqlc.arg(window_sends)::int - 1
    LIMIT 1
) b
ORDER BY m.id;
