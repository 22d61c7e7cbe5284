-- name: OpsEmailDueCount :one
-- How many rows ops_email_due.sql groups, counted only up to $max: a few
-- index entries of enrollments_step_due_idx per row, whatever the history.
-- store.OpsEmailDue chooses the grouping's plan by it.
SELECT count(*)::int AS n
FROM (
    SELECT 1
    FROM enrollments e
    WHERE e.status = 'active'
      AND e.step_due_at <= sqlc.arg(now)::timestamptz
      AND (sqlc.narg(workspace_id)::bigint IS NULL OR e.workspace_id = sqlc.narg(workspace_id))
      AND (sqlc.narg(campaign_id)::bigint IS NULL OR e.campaign_id = sqlc.narg(campaign_id))
    LIMIT sqlc.arg(max)
) d;
