-- name: PruneTickRuns :one
-- One prune batch of tick_runs (see prune_sends.sql for the walk): runs
-- started before cutoff go, except, for each kind, the newest run, the
-- newest 16 successes by start (status estimates the email cadence from the
-- newest 11) and the newest by finish, and the newest failure: what status
-- and doctor report about a kind however long ago it last ran. Each keeper
-- is a few steps down an index: tick_runs_kind_started_idx, and for the
-- newest success by finish and the newest failure, tick_runs_kind_finished_idx
-- and tick_runs_kind_failed_idx (migration 00020; without them every batch
-- read all of a kind's runs).
WITH scanned AS (
    SELECT r.id, r.kind, r.started_at
    FROM tick_runs r
    WHERE r.id > sqlc.arg(after)::bigint
    ORDER BY r.id
    LIMIT sqlc.arg(batch)::int
),
keepers AS (
    SELECT k.id
    FROM (SELECT DISTINCT sc.kind FROM scanned sc) ks
    CROSS JOIN LATERAL (
        (SELECT r.id FROM tick_runs r WHERE r.kind = ks.kind ORDER BY r.started_at DESC LIMIT 1)
        UNION ALL
        (SELECT r.id FROM tick_runs r WHERE r.kind = ks.kind AND r.exit_status = 0 ORDER BY r.started_at DESC LIMIT 16)
        UNION ALL
        (SELECT r.id FROM tick_runs r WHERE r.kind = ks.kind AND r.exit_status = 0 AND r.finished_at IS NOT NULL
         ORDER BY r.finished_at DESC LIMIT 1)
        UNION ALL
        (SELECT r.id FROM tick_runs r WHERE r.kind = ks.kind AND r.exit_status <> 0 ORDER BY r.started_at DESC LIMIT 1)
    ) k
),
doomed AS (
    SELECT sc.id
    FROM scanned sc
    WHERE sc.started_at < sqlc.arg(cutoff)::timestamptz
      AND sc.id NOT IN (SELECT kp.id FROM keepers kp)
),
locked AS (
    SELECT r.id
    FROM tick_runs r
    WHERE r.id IN (SELECT d.id FROM doomed d) AND NOT sqlc.arg(dry_run)::boolean
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM tick_runs r
    USING locked l
    WHERE r.id = l.id
    RETURNING r.id
)
SELECT coalesce((SELECT max(sc.id) FROM scanned sc), sqlc.arg(after)::bigint)::bigint AS last_id,
       (SELECT count(*) FROM scanned) AS scanned,
       (SELECT count(*) FROM doomed) AS matched,
       (SELECT count(*) FROM deleted) AS deleted,
       ((SELECT count(*) FROM scanned) < sqlc.arg(batch)::int
        OR EXISTS (SELECT 1 FROM scanned sc WHERE sc.started_at >= sqlc.arg(cutoff)::timestamptz))::boolean AS done;
