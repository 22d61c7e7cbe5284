-- name: EmailStepsTrim :exec
-- Drops the steps a re-import removed.
DELETE FROM sequence_steps WHERE campaign_id = $1 AND step > $2;
