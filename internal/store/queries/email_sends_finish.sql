-- Settles 'sending' rows as 'sent', or 'failed' when the server refused the
-- message (a failed row means: not delivered).
UPDATE sends s
SET status = u.status, sent_at = u.sent_at, error = NULLIF(u.error, '')
FROM unnest($1::bigint[], $2::int[], $3::text[], $4::timestamptz[], $5::text[]) AS u (enrollment_id, step, status, sent_at, error)
WHERE s.enrollment_id = u.enrollment_id AND s.step = u.step AND s.status = 'sending'
