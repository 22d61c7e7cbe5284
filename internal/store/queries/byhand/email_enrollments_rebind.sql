UPDATE enrollments e
SET mailbox_id = u.mailbox_id, updated_at = now()
FROM unnest(@enrollment_ids::bigint[], @mailbox_ids::bigint[]) AS u (id, mailbox_id)
WHERE e.id = u.id;
