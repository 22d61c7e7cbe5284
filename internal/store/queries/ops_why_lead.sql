-- name: OpsWhyLead :many
-- Leads matching $1 as an external id or $2 as an id (NULL when $1 is not a
-- number), optionally in workspace $3, with their enrichment state.
SELECT l.id, l.workspace_id, w.name, coalesce(l.external_id, ''), coalesce(l.email, ''), coalesce(l.email_source, ''),
       le.lead_id IS NOT NULL, coalesce(le.status, ''), coalesce(le.attempts, 0),
       le.next_attempt_at, le.locked_until, coalesce(le.locked_by, ''), le.negative_cache_until,
       coalesce(le.last_error, ''), coalesce(le.provider, ''), le.updated_at
FROM leads l
JOIN workspaces w ON w.id = l.workspace_id
LEFT JOIN lead_enrichment le ON le.lead_id = l.id
WHERE (l.id = $2 OR l.external_id = $1)
  AND ($3::bigint IS NULL OR l.workspace_id = $3)
ORDER BY l.id
LIMIT 10;
