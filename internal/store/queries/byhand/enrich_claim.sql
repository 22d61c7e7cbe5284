-- Claims up to a batch of due leads for tick @tick_id with a lease of @lease_seconds seconds,
-- in one statement. Due means: pending whose backoff has passed, unreachable
-- whose negative cache expired (next_attempt_at = negative_cache_until), and
-- in_progress whose lease ran out (a crashed tick; next_attempt_at =
-- locked_until). enrichment_failed is never claimed: only requeue revives it.
-- Rows updated since @tick_started (this tick's start) are skipped, so one tick works a
-- lead at most once even when its backoff is shorter than the tick.
--
-- The index is read from @after, the latest due time of the tick's previous
-- batch (-infinity for its first): every row due before it was claimed by
-- that batch or held by another tick's claim (SKIP LOCKED), and every
-- write sets a due time no earlier than itself. Below it lie only the dead
-- entries claimed rows left behind (a claim moves its row to the lease's
-- end, a recorded outcome takes it out), which until autovacuum came every
-- claim walked: the claim's cost grew with the table (issue 30).
--
-- The batch is not a parameter: store.claimSQL writes the tick's --batch in
-- place of "100 /* batch */". With LIMIT $n the prepared statement's generic
-- plan, which Postgres switches to after five runs, expects a large batch
-- and hashes the whole table for the join below (30 ms instead of 1 ms at
-- 100k due rows, EXPLAIN ANALYZE); with a literal it is the same plan as a
-- custom one, so it is planned once per connection instead of every claim
-- (planning took as long as running: ~1.3 ms per 100 rows).
WITH due AS (
    SELECT e.lead_id, e.status, e.next_attempt_at
    FROM lead_enrichment e
    WHERE e.status IN ('pending', 'in_progress', 'unreachable')
      AND e.next_attempt_at <= now()
      AND e.updated_at < @tick_started
      AND e.next_attempt_at >= @after::timestamptz
      AND (@workspace_id::bigint IS NULL OR e.workspace_id = @workspace_id)
    ORDER BY e.next_attempt_at
    LIMIT 100 /* batch */
    FOR UPDATE OF e SKIP LOCKED
)
UPDATE lead_enrichment e
SET status          = 'in_progress',
    locked_until    = now() + make_interval(secs => @lease_seconds),
    locked_by       = @tick_id,
    next_attempt_at = now() + make_interval(secs => @lease_seconds),
    attempts        = e.attempts + 1,
    updated_at      = now()
FROM due, leads l
WHERE e.lead_id = due.lead_id AND l.id = e.lead_id
RETURNING e.lead_id, e.workspace_id, e.attempts, due.status, due.next_attempt_at,
          l.first_name, l.last_name, l.company, l.company_domain, coalesce(l.email, ''),
          coalesce(e.found_email, ''), coalesce(e.found_by, ''), e.missed_by, e.doubted_by, e.doubted_at;
