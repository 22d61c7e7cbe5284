UPDATE enrollments e
SET mailbox_id = u.mailbox_id, updated_at = now()
FROM unnest($1::bigint[], $2::bigint[]) AS u (id, mailbox_id)
WHERE e.id = u.id;
