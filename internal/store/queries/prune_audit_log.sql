-- name: PruneAuditLog :one
-- One prune batch of audit_log (see prune_sends.sql for the walk): operator
-- actions recorded before cutoff go. Only when asked for (--keep
-- audit_log=...) and only by a role that may delete them: the tick role
-- may not.
WITH scanned AS (
    SELECT a.id, a.created_at
    FROM audit_log a
    WHERE a.id > sqlc.arg(after)::bigint
    ORDER BY a.id
    LIMIT sqlc.arg(batch)::int
),
doomed AS (
    SELECT sc.id FROM scanned sc WHERE sc.created_at < sqlc.arg(cutoff)::timestamptz
),
locked AS (
    SELECT a.id
    FROM audit_log a
    WHERE a.id IN (SELECT d.id FROM doomed d) AND NOT sqlc.arg(dry_run)::boolean
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM audit_log a
    USING locked l
    WHERE a.id = l.id
    RETURNING a.id
)
SELECT coalesce((SELECT max(sc.id) FROM scanned sc), sqlc.arg(after)::bigint)::bigint AS last_id,
       (SELECT count(*) FROM scanned) AS scanned,
       (SELECT count(*) FROM doomed) AS matched,
       (SELECT count(*) FROM deleted) AS deleted,
       ((SELECT count(*) FROM scanned) < sqlc.arg(batch)::int
        OR EXISTS (SELECT 1 FROM scanned sc WHERE sc.created_at >= sqlc.arg(cutoff)::timestamptz))::boolean AS done;
