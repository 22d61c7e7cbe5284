-- name: InboxSendsToRecipients :many
-- For a delivery report that proved nothing of ours (issue 37: an address
-- alone never matches): the latest send of mailbox mailbox_id since since
-- (30 days) to each of the addresses recipients that the server did not
-- refuse, to say how many it names that this mailbox never mailed (the
-- inbox_suspicious alert) and how many it did (the unmatched record).
-- recipients are canonical (address.Key), as leads store them. Reads the
-- mailbox's sends of the period on sends_mailbox_created_idx, never the
-- whole table.
SELECT DISTINCT ON (l.email)
       l.email::text AS email, s.id AS send_id, s.enrollment_id, e.workspace_id
FROM sends s
JOIN enrollments e ON e.id = s.enrollment_id
JOIN leads l ON l.id = e.lead_id
WHERE s.mailbox_id = sqlc.arg(mailbox_id)::bigint
  AND s.created_at > sqlc.arg(since)::timestamptz
  AND s.status <> 'failed'
  AND l.email = ANY (sqlc.arg(recipients)::text[])
ORDER BY l.email, s.created_at DESC, s.id DESC;
