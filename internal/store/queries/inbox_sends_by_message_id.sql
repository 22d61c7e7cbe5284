-- name: InboxSendsByMessageId :many
-- The sends of mailbox mailbox_id carrying one of the Message-IDs
-- message_ids (a reply's In-Reply-To/References, a bounce's returned
-- original, a VERP return path's message), with the address each went to.
-- Keyed: sends.message_id is unique.
SELECT s.id AS send_id, s.enrollment_id, e.workspace_id, coalesce(l.email, '')::text AS email
FROM sends s
JOIN enrollments e ON e.id = s.enrollment_id
JOIN leads l ON l.id = e.lead_id
WHERE s.message_id = ANY (sqlc.arg(message_ids)::text[]) AND s.mailbox_id = sqlc.arg(mailbox_id)::bigint
ORDER BY s.id;
