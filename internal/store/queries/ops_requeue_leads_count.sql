-- name: OpsRequeueLeadsCount :many
-- Dry run of a lead requeue: rows in status $1 matching the filters
-- (workspace $2, provider $3, untouched for longer than $4), by workspace
-- and provider.
SELECT w.name, coalesce(le.provider, ''), count(*)
FROM lead_enrichment le
JOIN workspaces w ON w.id = le.workspace_id
WHERE le.status = $1
  AND ($2::bigint IS NULL OR le.workspace_id = $2)
  AND ($3::text IS NULL OR le.provider = $3)
  AND ($4::interval IS NULL OR le.updated_at < now() - $4::interval)
GROUP BY 1, 2
ORDER BY 1, 2;
