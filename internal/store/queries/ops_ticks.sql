-- name: OpsTicks :many
-- Per tick kind: the last start, the last success and the last failure, and
-- how many runs and failures started in the 24 hours before $1. Each lateral
-- walks tick_runs_kind_started_idx from the newest row.
SELECT k.kind,
       s.tick_id, s.host, s.started_at, s.finished_at, s.exit_status,
       ok.started_at, ok.finished_at, ok.claimed, ok.counts,
       bad.started_at, bad.exit_status, coalesce(bad.error, ''),
       (SELECT count(*) FROM tick_runs r
        WHERE r.kind = k.kind AND r.started_at > $1::timestamptz - interval '24 hours' AND r.started_at <= $1::timestamptz) AS runs_24h,
       (SELECT count(*) FROM tick_runs r
        WHERE r.kind = k.kind AND r.started_at > $1::timestamptz - interval '24 hours' AND r.started_at <= $1
          AND r.exit_status <> 0) AS failures_24h
FROM unnest(ARRAY['enrich', 'email', 'events', 'inbox']) AS k(kind)
LEFT JOIN LATERAL (
    SELECT r.tick_id, r.host, r.started_at, r.finished_at, r.exit_status
    FROM tick_runs r WHERE r.kind = k.kind AND r.started_at <= $1
    ORDER BY r.started_at DESC LIMIT 1) s ON true
LEFT JOIN LATERAL (
    SELECT r.started_at, r.finished_at, r.claimed, r.counts
    FROM tick_runs r WHERE r.kind = k.kind AND r.started_at <= $1 AND r.exit_status = 0
    ORDER BY r.started_at DESC LIMIT 1) ok ON true
LEFT JOIN LATERAL (
    SELECT r.started_at, r.exit_status, r.error
    FROM tick_runs r WHERE r.kind = k.kind AND r.started_at <= $1 AND r.exit_status <> 0
    ORDER BY r.started_at DESC LIMIT 1) bad ON true;
