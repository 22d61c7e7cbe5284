-- name: OpsWhyLead :many
-- Leads matching ref as an external id or id as an id (NULL when ref is not
-- a number), optionally in one workspace, with their enrichment state.
SELECT l.id, l.workspace_id, w.name AS workspace, coalesce(l.external_id, ''), coalesce(l.email, ''), coalesce(l.email_source, ''),
       (le.lead_id IS NOT NULL)::boolean AS has_enrichment, coalesce(le.status, ''), coalesce(le.attempts, 0),
       le.next_attempt_at, le.locked_until, coalesce(le.locked_by, ''), le.negative_cache_until,
       coalesce(le.last_error, ''), coalesce(le.provider, ''), le.updated_at,
       coalesce(le.found_email, '') AS found_email, coalesce(le.found_by, '') AS found_by,
       coalesce(le.missed_by, '{}')::text[] AS missed_by,
       coalesce(le.doubted_by, '{}')::text[] AS doubted_by, le.doubted_at
FROM leads l
JOIN workspaces w ON w.id = l.workspace_id
LEFT JOIN lead_enrichment le ON le.lead_id = l.id
WHERE (l.id = sqlc.narg(id)::bigint OR l.external_id = sqlc.arg(ref)::text)
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR l.workspace_id = sqlc.narg(workspace_id))
ORDER BY l.id
LIMIT 10;
