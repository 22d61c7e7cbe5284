-- name: OpsRequeueLeadsCount :many
-- Dry run of a lead requeue: rows in status matching the filters
-- (workspace, provider, untouched for longer than older_than), by workspace
-- and provider.
SELECT w.name AS workspace, coalesce(le.provider, '') AS provider, count(*)
FROM lead_enrichment le
JOIN workspaces w ON w.id = le.workspace_id
WHERE le.status = sqlc.arg(status)
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR le.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(provider)::text IS NULL OR le.provider = sqlc.narg(provider))
  AND (sqlc.narg(older_than)::interval IS NULL OR le.updated_at < now() - sqlc.narg(older_than)::interval)
GROUP BY 1, 2
ORDER BY 1, 2;
