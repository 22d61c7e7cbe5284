-- Writes steps 1..n of a campaign (@steps, @delay_seconds, @subjects, @bodies are parallel arrays).
INSERT INTO sequence_steps (campaign_id, step, delay_seconds, subject, body)
SELECT @campaign_id, u.step, u.delay_seconds, NULLIF(u.subject, ''), u.body
FROM unnest(@steps::int[], @delay_seconds::bigint[], @subjects::text[], @bodies::text[]) AS u (step, delay_seconds, subject, body)
ON CONFLICT (campaign_id, step) DO UPDATE
SET delay_seconds = EXCLUDED.delay_seconds,
    subject       = EXCLUDED.subject,
    body          = EXCLUDED.body;
