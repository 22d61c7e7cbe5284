-- name: PruneProviderCalls :one
-- One prune batch of the provider_calls ledger (see prune_sends.sql for the
-- walk): settled and refunded calls created before cutoff go. The caller
-- never passes a cutoff inside the previous or current UTC month (the
-- ceiling and the month's spend read them); a 'reserved' call stays
-- whatever its age: its settle or refund still has to find it.
WITH scanned AS (
    SELECT c.id, c.created_at, c.state
    FROM provider_calls c
    WHERE c.id > sqlc.arg(after)::bigint
    ORDER BY c.id
    LIMIT sqlc.arg(batch)::int
),
doomed AS (
    SELECT sc.id
    FROM scanned sc
    WHERE sc.created_at < sqlc.arg(cutoff)::timestamptz
      AND sc.state IN ('settled', 'refunded')
),
locked AS (
    SELECT c.id
    FROM provider_calls c
    WHERE c.id IN (SELECT d.id FROM doomed d) AND NOT sqlc.arg(dry_run)::boolean
      AND c.state IN ('settled', 'refunded')
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM provider_calls c
    USING locked l
    WHERE c.id = l.id
    RETURNING c.id
)
SELECT coalesce((SELECT max(sc.id) FROM scanned sc), sqlc.arg(after)::bigint)::bigint AS last_id,
       (SELECT count(*) FROM scanned) AS scanned,
       (SELECT count(*) FROM doomed) AS matched,
       (SELECT count(*) FROM deleted) AS deleted,
       ((SELECT count(*) FROM scanned) < sqlc.arg(batch)::int
        OR EXISTS (SELECT 1 FROM scanned sc WHERE sc.created_at >= sqlc.arg(cutoff)::timestamptz))::boolean AS done;
