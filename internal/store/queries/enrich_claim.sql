-- Claims up to $1 due leads for tick $3 with a lease of $2 seconds, in one
-- statement. Due means: pending whose backoff has passed, unreachable whose
-- negative cache expired (next_attempt_at = negative_cache_until), and
-- in_progress whose lease ran out (a crashed tick; next_attempt_at =
-- locked_until). enrichment_failed is never claimed: only requeue revives it.
-- Rows updated since $5 (this tick's start) are skipped, so one tick works a
-- lead at most once even when its backoff is shorter than the tick.
WITH due AS (
    SELECT e.lead_id, e.status, e.next_attempt_at
    FROM lead_enrichment e
    WHERE e.status IN ('pending', 'in_progress', 'unreachable')
      AND e.next_attempt_at <= now()
      AND e.updated_at < $5
      AND ($4::bigint IS NULL OR e.workspace_id = $4)
    ORDER BY e.next_attempt_at
    LIMIT $1
    FOR UPDATE OF e SKIP LOCKED
)
UPDATE lead_enrichment e
SET status          = 'in_progress',
    locked_until    = now() + make_interval(secs => $2),
    locked_by       = $3,
    next_attempt_at = now() + make_interval(secs => $2),
    attempts        = e.attempts + 1,
    updated_at      = now()
FROM due, leads l
WHERE e.lead_id = due.lead_id AND l.id = e.lead_id
RETURNING e.lead_id, e.workspace_id, e.attempts, due.status, due.next_attempt_at,
          l.first_name, l.last_name, l.company, l.company_domain, coalesce(l.email, '')
