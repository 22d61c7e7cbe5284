-- name: OpsRequeueEnrollmentsCount :many
-- Dry run of an enrollment requeue: enrollments in status $4 ('failed' or
-- 'delivery_unknown') matching the filters (workspace $1, campaign $2,
-- untouched for longer than $3), by workspace and campaign.
SELECT w.name, c.name, count(*)
FROM enrollments e
JOIN workspaces w ON w.id = e.workspace_id
JOIN campaigns c ON c.id = e.campaign_id
WHERE e.status = $4
  AND ($1::bigint IS NULL OR e.workspace_id = $1)
  AND ($2::bigint IS NULL OR e.campaign_id = $2)
  AND ($3::interval IS NULL OR e.updated_at < now() - $3::interval)
GROUP BY 1, 2
ORDER BY 1, 2;
