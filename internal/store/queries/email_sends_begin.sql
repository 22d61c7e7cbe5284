-- Records sends as 'sending' before SMTP. The unique (enrollment, step) key
-- makes a step at-most-once: a step whose row is 'sending' or 'sent' is not
-- returned, and that message is not sent again. A 'failed' row (the server
-- refused the message, so nothing was delivered) is taken over by the retry.
INSERT INTO sends (enrollment_id, step, mailbox_id, message_id)
SELECT u.enrollment_id, u.step, u.mailbox_id, u.message_id
FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::text[]) AS u (enrollment_id, step, mailbox_id, message_id)
ON CONFLICT (enrollment_id, step) DO UPDATE
SET mailbox_id = EXCLUDED.mailbox_id,
    message_id = EXCLUDED.message_id,
    status     = 'sending',
    error      = NULL,
    sent_at    = NULL,
    created_at = now()
WHERE sends.status = 'failed'
RETURNING enrollment_id
