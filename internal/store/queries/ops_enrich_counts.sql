-- name: OpsEnrichCounts :many
-- Enrichment state per workspace in one pass over the narrow
-- lead_enrichment table: counts by status, what is due at now, and what waits
-- behind a negative cache or a rate limit. "waiting" is the work a breaker or
-- a spend ceiling would hold: pending rows and unreachable rows whose
-- negative cache has run out.
SELECT le.workspace_id,
       count(*) FILTER (WHERE le.status = 'pending')           AS pending,
       count(*) FILTER (WHERE le.status = 'in_progress')       AS in_progress,
       count(*) FILTER (WHERE le.status = 'enriched')          AS enriched,
       count(*) FILTER (WHERE le.status = 'not_found')         AS not_found,
       count(*) FILTER (WHERE le.status = 'unreachable')       AS unreachable,
       count(*) FILTER (WHERE le.status = 'enrichment_failed') AS enrichment_failed,
       count(*) FILTER (WHERE le.status IN ('pending', 'in_progress', 'unreachable')
                          AND le.next_attempt_at <= sqlc.arg(now))        AS due_now,
       count(*) FILTER (WHERE le.status = 'unreachable'
                          AND le.negative_cache_until > sqlc.arg(now))    AS negative_cache,
       count(*) FILTER (WHERE le.status = 'pending'
                           OR (le.status = 'unreachable' AND le.negative_cache_until <= sqlc.arg(now))) AS waiting,
       count(*) FILTER (WHERE le.status = 'pending' AND le.next_attempt_at > sqlc.arg(now)
                          AND le.last_error LIKE '%rate_limited%') AS rate_limited
FROM lead_enrichment le
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR le.workspace_id = sqlc.narg(workspace_id))
GROUP BY le.workspace_id;
