-- name: OpsRequeueEnrollmentsCount :many
-- Dry run of an enrollment requeue: enrollments in status ('failed' or
-- 'delivery_unknown') matching the filters (workspace, campaign,
-- untouched for longer than older_than), by workspace and campaign.
SELECT w.name AS workspace, c.name AS campaign, count(*)
FROM enrollments e
JOIN workspaces w ON w.id = e.workspace_id
JOIN campaigns c ON c.id = e.campaign_id
WHERE e.status = sqlc.arg(status)
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR e.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(campaign_id)::bigint IS NULL OR e.campaign_id = sqlc.narg(campaign_id))
  AND (sqlc.narg(older_than)::interval IS NULL OR e.updated_at < now() - sqlc.narg(older_than)::interval)
GROUP BY 1, 2
ORDER BY 1, 2;
