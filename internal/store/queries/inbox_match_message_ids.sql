-- name: InboxMatchMessageIds :many
-- Enrollments whose messages, sent from mailbox $1, carry one of the
-- Message-IDs $2 (a reply's In-Reply-To/References, a bounce's original).
SELECT DISTINCT s.enrollment_id
FROM sends s
WHERE s.message_id = ANY ($2::text[]) AND s.mailbox_id = $1
ORDER BY 1;
