-- name: OpsTickHealth :many
-- Per tick kind ($3), on the database's clock: seconds since the last
-- successful run finished, how many runs finished (one still running is
-- neither a success nor a failure yet), and the crashed runs:
-- started more than $1 seconds (the lease) ago, within the crash window ($2
-- seconds), never finished; with the newest crashed run's id; and the error
-- of the newest failed run, so a kind that keeps failing says why.
SELECT k.kind,
       extract(epoch FROM now() - ok.finished_at)::float8,
       (SELECT count(*) FROM tick_runs r WHERE r.kind = k.kind AND r.finished_at IS NOT NULL),
       coalesce(crashed.n, 0), coalesce(crashed.tick_id, ''),
       coalesce(bad.error, '')
FROM unnest($3::text[]) AS k(kind)
LEFT JOIN LATERAL (
    SELECT max(r.finished_at) AS finished_at FROM tick_runs r
    WHERE r.kind = k.kind AND r.exit_status = 0) ok ON true
LEFT JOIN LATERAL (
    SELECT count(*) OVER () AS n, r.tick_id FROM tick_runs r
    WHERE r.kind = k.kind AND r.finished_at IS NULL
      AND r.started_at < now() - make_interval(secs => $1)
      AND r.started_at > now() - make_interval(secs => $2)
    ORDER BY r.started_at DESC LIMIT 1) crashed ON true
LEFT JOIN LATERAL (
    SELECT coalesce(r.error, 'exit status ' || r.exit_status) AS error FROM tick_runs r
    WHERE r.kind = k.kind AND r.exit_status <> 0
    ORDER BY r.started_at DESC LIMIT 1) bad ON true
ORDER BY k.kind;
