-- name: EmailStepsList :many
SELECT step, delay_seconds, coalesce(subject, ''), body
FROM sequence_steps
WHERE campaign_id = sqlc.arg(campaign_id)
ORDER BY step;
