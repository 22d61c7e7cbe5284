-- name: BenchHistoryTickRuns :exec
-- n finished tick runs over a year, the kinds in turn, in id order.
INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, claimed, exit_status)
SELECT (ARRAY['enrich', 'email', 'events', 'inbox'])[1 + g % 4], 'history-' || g, 'history', 1, t, t + interval '5 seconds', g % 100,
       CASE WHEN g % 50 = 0 THEN 1 ELSE 0 END
FROM generate_series(1, sqlc.arg(n)::int) g,
     LATERAL (SELECT now() - interval '365 days' + (g - 1) * (interval '365 days' / sqlc.arg(n)::int) AS t) ts
ORDER BY g;
