-- name: BenchHistorySends :exec
-- Four sends per history enrollment of the campaign, a second apart from its
-- start, in id order; one in a hundred failed.
INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at, sent_at)
SELECT e.id, s.step, e.mailbox_id, '<h' || e.id || '.' || s.step || '@history.example>',
       CASE WHEN (e.id + s.step) % 100 = 0 THEN 'failed' ELSE 'sent' END,
       e.created_at + (s.step - 1) * interval '1 second', e.created_at + (s.step - 1) * interval '1 second'
FROM enrollments e
CROSS JOIN generate_series(1, 4) s (step)
WHERE e.campaign_id = sqlc.arg(campaign_id)::bigint
ORDER BY e.id, s.step;
