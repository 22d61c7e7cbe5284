-- name: PruneEnrollments :one
-- One prune batch of enrollments (see prune_sends.sql for the walk; the
-- walk stops at a row created at or after cutoff, since no younger row can
-- have ended before it): enrollments that ended for good (completed,
-- replied, bounced, unsubscribed) before cutoff go, with their sends (ON
-- DELETE CASCADE). 'failed' and 'delivery_unknown' stay: a requeue may
-- revive them. Only when asked for (--keep enrollments=...): the address
-- stays in campaign_recipients, so the campaign never mails it again, but
-- `enroll` could add the lead to the campaign anew.
WITH scanned AS (
    SELECT e.id, e.created_at, e.updated_at, e.status
    FROM enrollments e
    WHERE e.id > sqlc.arg(after)::bigint
    ORDER BY e.id
    LIMIT sqlc.arg(batch)::int
),
doomed AS (
    SELECT sc.id
    FROM scanned sc
    WHERE sc.updated_at < sqlc.arg(cutoff)::timestamptz
      AND sc.status IN ('completed', 'replied', 'bounced', 'unsubscribed')
),
locked AS (
    SELECT e.id
    FROM enrollments e
    WHERE e.id IN (SELECT d.id FROM doomed d) AND NOT sqlc.arg(dry_run)::boolean
      AND e.status IN ('completed', 'replied', 'bounced', 'unsubscribed')
      AND e.updated_at < sqlc.arg(cutoff)::timestamptz
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM enrollments e
    USING locked l
    WHERE e.id = l.id
    RETURNING e.id
)
SELECT coalesce((SELECT max(sc.id) FROM scanned sc), sqlc.arg(after)::bigint)::bigint AS last_id,
       (SELECT count(*) FROM scanned) AS scanned,
       (SELECT count(*) FROM doomed) AS matched,
       (SELECT count(*) FROM deleted) AS deleted,
       ((SELECT count(*) FROM scanned) < sqlc.arg(batch)::int
        OR EXISTS (SELECT 1 FROM scanned sc WHERE sc.created_at >= sqlc.arg(cutoff)::timestamptz))::boolean AS done;
