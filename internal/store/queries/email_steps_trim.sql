-- name: EmailStepsTrim :exec
-- Drops the steps a re-import removed.
DELETE FROM sequence_steps WHERE campaign_id = sqlc.arg(campaign_id) AND step > sqlc.arg(step);
