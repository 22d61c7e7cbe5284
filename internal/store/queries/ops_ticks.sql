-- name: OpsTicks :many
-- Per tick kind: the last start, the last success and the last failure, and
-- how many runs and failures started in the 24 hours before now. Each row is
-- found by a subquery walking tick_runs_kind_started_idx from the newest row
-- and left-joined by id, so sqlc types its columns as nullable.
SELECT k.kind::text AS kind,
       s.tick_id, s.host, s.started_at, s.finished_at, s.exit_status,
       ok.started_at AS success_started_at, ok.finished_at AS success_finished_at,
       ok.claimed AS success_claimed, ok.counts AS success_counts,
       bad.started_at AS failure_started_at, bad.exit_status AS failure_exit_status,
       coalesce(bad.error, '') AS failure_error,
       (SELECT count(*) FROM tick_runs r
        WHERE r.kind = k.kind AND r.started_at > sqlc.arg(now)::timestamptz - interval '24 hours'
          AND r.started_at <= sqlc.arg(now)::timestamptz) AS runs_24h,
       (SELECT count(*) FROM tick_runs r
        WHERE r.kind = k.kind AND r.started_at > sqlc.arg(now)::timestamptz - interval '24 hours'
          AND r.started_at <= sqlc.arg(now)::timestamptz
          AND r.exit_status <> 0) AS failures_24h
FROM unnest(ARRAY['enrich', 'email', 'events', 'inbox', 'prune']) AS k(kind)
LEFT JOIN tick_runs s ON s.id = (
    SELECT r.id FROM tick_runs r WHERE r.kind = k.kind AND r.started_at <= sqlc.arg(now)::timestamptz
    ORDER BY r.started_at DESC LIMIT 1)
LEFT JOIN tick_runs ok ON ok.id = (
    SELECT r.id FROM tick_runs r
    WHERE r.kind = k.kind AND r.started_at <= sqlc.arg(now)::timestamptz AND r.exit_status = 0
    ORDER BY r.started_at DESC LIMIT 1)
LEFT JOIN tick_runs bad ON bad.id = (
    SELECT r.id FROM tick_runs r
    WHERE r.kind = k.kind AND r.started_at <= sqlc.arg(now)::timestamptz AND r.exit_status <> 0
    ORDER BY r.started_at DESC LIMIT 1);
