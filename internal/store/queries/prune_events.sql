-- name: PruneEvents :one
-- One prune batch of the events outbox (see prune_sends.sql for the walk):
-- events created before cutoff that were delivered, or were never meant
-- to be posted (an episode's companions), go. Kept whatever their age: an
-- alert not yet delivered, and the events of the current episode of a
-- breaker that is not closed (its alert and companions explain it).
WITH scanned AS (
    SELECT ev.id, ev.created_at, ev.delivered_at, ev.alert, ev.workspace_id, ev.provider, ev.payload
    FROM events ev
    WHERE ev.id > sqlc.arg(after)::bigint
    ORDER BY ev.id
    LIMIT sqlc.arg(batch)::int
),
doomed AS (
    SELECT sc.id
    FROM scanned sc
    WHERE sc.created_at < sqlc.arg(cutoff)::timestamptz
      AND (sc.delivered_at IS NOT NULL OR NOT sc.alert)
      AND NOT EXISTS (SELECT 1 FROM breakers b
                      WHERE b.workspace_id = sc.workspace_id AND b.provider = sc.provider
                        AND b.state <> 'closed' AND sc.payload->>'episode' = b.episode::text)
),
locked AS (
    SELECT ev.id
    FROM events ev
    WHERE ev.id IN (SELECT d.id FROM doomed d) AND NOT sqlc.arg(dry_run)::boolean
      AND (ev.delivered_at IS NOT NULL OR NOT ev.alert)
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM events ev
    USING locked l
    WHERE ev.id = l.id
    RETURNING ev.id
)
SELECT coalesce((SELECT max(sc.id) FROM scanned sc), sqlc.arg(after)::bigint)::bigint AS last_id,
       (SELECT count(*) FROM scanned) AS scanned,
       (SELECT count(*) FROM doomed) AS matched,
       (SELECT count(*) FROM deleted) AS deleted,
       ((SELECT count(*) FROM scanned) < sqlc.arg(batch)::int
        OR EXISTS (SELECT 1 FROM scanned sc WHERE sc.created_at >= sqlc.arg(cutoff)::timestamptz))::boolean AS done;
