-- One prune batch of sends (the bounce-rate windows as arrays
-- @window_mailbox_ids, @window_created_at, @window_ids: sqlc cannot type an
-- unnest of several arrays): the next @batch rows after the key @after, in
-- key order (ids grow with created_at), of which those created before @cutoff,
-- settled ('sent' or 'failed') and of an enrollment that ended for good
-- (completed, replied, bounced, unsubscribed) are deleted. Kept whatever
-- their age: the sends of active enrollments (the claim threads a
-- follow-up on them, the inbox matches replies to them), of 'failed' and
-- 'delivery_unknown' ones (a requeue makes them active again), every
-- 'sending' or 'delivery_unknown' row (unsettled), and each mailbox's
-- bounce-rate window: its sends from @window_created_at/@window_ids on (what
-- prune_window_starts.sql returned; a mailbox not in them keeps all its
-- sends). Rows another
-- transaction holds are skipped (SKIP LOCKED), never waited for. With
-- dry_run nothing is locked or deleted and matched counts what would go.
-- done: the batch reached the end of the table or a row not older than
-- cutoff, so the rest is too young.
WITH scanned AS (
    SELECT s.id, s.created_at, s.status, s.enrollment_id, s.mailbox_id
    FROM sends s
    WHERE s.id > @after::bigint
    ORDER BY s.id
    LIMIT @batch::int
),
doomed AS (
    SELECT sc.id
    FROM scanned sc
    JOIN enrollments e ON e.id = sc.enrollment_id
    LEFT JOIN unnest(@window_mailbox_ids::bigint[], @window_created_at::timestamptz[], @window_ids::bigint[])
        AS w (mailbox_id, created_at, id) ON w.mailbox_id = sc.mailbox_id
    WHERE sc.created_at < @cutoff::timestamptz
      AND sc.status IN ('sent', 'failed')
      AND e.status IN ('completed', 'replied', 'bounced', 'unsubscribed')
      AND (sc.mailbox_id IS NULL OR (sc.created_at, sc.id) < (w.created_at, w.id))
),
locked AS (
    SELECT s.id
    FROM sends s
    WHERE s.id IN (SELECT d.id FROM doomed d) AND NOT @dry_run::boolean
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM sends s
    USING locked l
    WHERE s.id = l.id
    RETURNING s.id
)
SELECT coalesce((SELECT max(sc.id) FROM scanned sc), @after::bigint)::bigint AS last_id,
       (SELECT count(*) FROM scanned) AS scanned,
       (SELECT count(*) FROM doomed) AS matched,
       (SELECT count(*) FROM deleted) AS deleted,
       ((SELECT count(*) FROM scanned) < @batch::int
        OR EXISTS (SELECT 1 FROM scanned sc WHERE sc.created_at >= @cutoff::timestamptz))::boolean AS done;
