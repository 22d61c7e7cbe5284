-- name: OpsRequeueEnrollmentsBatch :many
-- One requeue batch of enrollments in status 'failed' or
-- 'delivery_unknown'; up to batch, SKIP LOCKED): they become active and due
-- now with attempts, lease and last error cleared. The failed or
-- delivery_unknown sends row of the current step is removed too: the
-- (enrollment, step) key would otherwise stop the email tick from trying
-- that step again. Requeueing delivery_unknown is the operator's decision
-- that the message did not arrive.
WITH picked AS (
    SELECT e.id
    FROM enrollments e
    WHERE e.status = sqlc.arg(status)
      AND (sqlc.narg(workspace_id)::bigint IS NULL OR e.workspace_id = sqlc.narg(workspace_id))
      AND (sqlc.narg(campaign_id)::bigint IS NULL OR e.campaign_id = sqlc.narg(campaign_id))
      AND (sqlc.narg(older_than)::interval IS NULL OR e.updated_at < now() - sqlc.narg(older_than)::interval)
    LIMIT sqlc.arg(batch)
    FOR UPDATE SKIP LOCKED
),
moved AS (
    UPDATE enrollments e
    SET status       = 'active',
        next_send_at = now(),
        attempts     = 0,
        locked_until = NULL,
        locked_by    = NULL,
        last_error   = NULL,
        updated_at   = now()
    FROM picked p
    WHERE e.id = p.id
    RETURNING e.id, e.workspace_id, e.campaign_id, e.current_step
),
cleared AS (
    DELETE FROM sends s
    USING moved m
    WHERE s.enrollment_id = m.id AND s.step = m.current_step AND s.status IN ('failed', 'delivery_unknown')
)
SELECT w.name AS workspace, c.name AS campaign, count(*)
FROM moved m
JOIN workspaces w ON w.id = m.workspace_id
JOIN campaigns c ON c.id = m.campaign_id
GROUP BY 1, 2;
