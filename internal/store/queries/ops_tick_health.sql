-- name: OpsTickHealth :many
-- Per tick kind, on the database's clock (db_now): when the last successful
-- run finished, how many runs finished (one still running is neither a
-- success nor a failure yet), and the crashed runs: started more than
-- lease_secs ago, within the crash window, never finished; with the newest
-- crashed run's id; and the error of the newest failed run, so a kind that
-- keeps failing says why. The last success is left-joined by id, so sqlc
-- types it as nullable.
SELECT k.kind::text AS kind,
       now()::timestamptz AS db_now,
       ok.finished_at AS success_finished_at,
       (SELECT count(*) FROM tick_runs r WHERE r.kind = k.kind AND r.finished_at IS NOT NULL) AS runs,
       coalesce(crashed.n, 0) AS crashed, coalesce(crashed.tick_id, '') AS newest_crashed,
       coalesce(bad.error, '') AS last_error
FROM unnest(sqlc.arg(kinds)::text[]) AS k(kind)
LEFT JOIN tick_runs ok ON ok.id = (
    SELECT r.id FROM tick_runs r
    WHERE r.kind = k.kind AND r.exit_status = 0 AND r.finished_at IS NOT NULL
    ORDER BY r.finished_at DESC LIMIT 1)
LEFT JOIN LATERAL (
    SELECT count(*) OVER () AS n, r.tick_id FROM tick_runs r
    WHERE r.kind = k.kind AND r.finished_at IS NULL
      AND r.started_at < now() - make_interval(secs => sqlc.arg(lease_secs)::float8)
      AND r.started_at > now() - make_interval(secs => sqlc.arg(crash_window_secs)::float8)
    ORDER BY r.started_at DESC LIMIT 1) crashed ON true
LEFT JOIN LATERAL (
    SELECT coalesce(r.error, 'exit status ' || r.exit_status) AS error FROM tick_runs r
    WHERE r.kind = k.kind AND r.exit_status <> 0
    ORDER BY r.started_at DESC LIMIT 1) bad ON true
ORDER BY k.kind;
