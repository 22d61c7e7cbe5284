-- name: OpsRequeueLeadsBatch :many
-- One requeue batch: claims up to batch matching leads the way a tick claims
-- (SKIP LOCKED, so a row a tick holds is left alone and no tick waits on us
-- for longer than this statement), and makes them pending and due now with a
-- clean slate: attempts, lease, negative cache and last error cleared.
-- What providers already answered stays (an address paid for and awaiting
-- verification, the finders that found nothing, those whose answer was
-- lost), so no finder is asked or paid again, unless refind asks to forget
-- it.
-- Moved rows leave the status, so the next batch finds the next ones.
WITH picked AS (
    SELECT le.lead_id
    FROM lead_enrichment le
    WHERE le.status = sqlc.arg(status)
      AND (sqlc.narg(workspace_id)::bigint IS NULL OR le.workspace_id = sqlc.narg(workspace_id))
      AND (sqlc.narg(provider)::text IS NULL OR le.provider = sqlc.narg(provider))
      AND (sqlc.narg(older_than)::interval IS NULL OR le.updated_at < now() - sqlc.narg(older_than)::interval)
    LIMIT sqlc.arg(batch)
    FOR UPDATE SKIP LOCKED
),
moved AS (
    UPDATE lead_enrichment le
    SET status               = 'pending',
        attempts             = 0,
        next_attempt_at      = now(),
        negative_cache_until = NULL,
        locked_until         = NULL,
        locked_by            = NULL,
        last_error           = NULL,
        found_email          = CASE WHEN sqlc.arg(refind)::boolean THEN NULL ELSE le.found_email END,
        found_by             = CASE WHEN sqlc.arg(refind)::boolean THEN NULL ELSE le.found_by END,
        missed_by            = CASE WHEN sqlc.arg(refind)::boolean THEN '{}' ELSE le.missed_by END,
        doubted_by           = CASE WHEN sqlc.arg(refind)::boolean THEN '{}' ELSE le.doubted_by END,
        updated_at           = now()
    FROM picked p
    WHERE le.lead_id = p.lead_id
    RETURNING le.workspace_id, le.provider
)
SELECT w.name AS workspace, coalesce(m.provider, '') AS provider, count(*)
FROM moved m
JOIN workspaces w ON w.id = m.workspace_id
GROUP BY 1, 2;
