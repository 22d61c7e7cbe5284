-- name: InboxMatchRecipients :many
-- Active enrollments of mailbox $1 to the addresses $2: for a bounce that
-- does not return the original's Message-ID.
-- $2 holds canonical addresses (address.Canonical), as leads store them.
SELECT e.id
FROM enrollments e
JOIN leads l ON l.id = e.lead_id
WHERE e.mailbox_id = $1 AND e.status = 'active' AND l.email = ANY ($2::text[])
ORDER BY 1;
