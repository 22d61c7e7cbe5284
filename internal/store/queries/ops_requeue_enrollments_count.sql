-- Dry run of an enrollment requeue: failed enrollments matching the filters
-- (workspace $1, campaign $2, untouched for longer than $3), by workspace and
-- campaign.
SELECT w.name, c.name, count(*)
FROM enrollments e
JOIN workspaces w ON w.id = e.workspace_id
JOIN campaigns c ON c.id = e.campaign_id
WHERE e.status = 'failed'
  AND ($1::bigint IS NULL OR e.workspace_id = $1)
  AND ($2::bigint IS NULL OR e.campaign_id = $2)
  AND ($3::interval IS NULL OR e.updated_at < now() - $3::interval)
GROUP BY 1, 2
ORDER BY 1, 2
