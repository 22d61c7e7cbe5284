-- name: DemoInboxSent :many
-- The first two messages a mailbox sent, with their recipients: the demo
-- answers them with a reply and a bounce.
SELECT s.message_id, l.email
FROM sends s
JOIN enrollments e ON e.id = s.enrollment_id
JOIN leads l ON l.id = e.lead_id
JOIN mailboxes m ON m.id = s.mailbox_id
WHERE m.address = sqlc.arg(address)
ORDER BY l.id
LIMIT 2;
