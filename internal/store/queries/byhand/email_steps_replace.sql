-- Writes steps 1..n of a campaign ($2.. are parallel arrays).
INSERT INTO sequence_steps (campaign_id, step, delay_seconds, subject, body)
SELECT $1, u.step, u.delay_seconds, NULLIF(u.subject, ''), u.body
FROM unnest($2::int[], $3::bigint[], $4::text[], $5::text[]) AS u (step, delay_seconds, subject, body)
ON CONFLICT (campaign_id, step) DO UPDATE
SET delay_seconds = EXCLUDED.delay_seconds,
    subject       = EXCLUDED.subject,
    body          = EXCLUDED.body;
