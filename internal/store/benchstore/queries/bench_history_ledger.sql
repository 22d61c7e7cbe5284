-- name: BenchHistoryLedger :exec
-- n settled provider calls of the workspace over a year, in id order (one
-- in twenty refunded), and the month-to-date counters they added up to.
WITH calls AS (
    INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, outcome, tick_id, created_at, settled_at)
    SELECT sqlc.arg(workspace_id)::bigint, (ARRAY['findymail', 'hunter'])[1 + g % 2], CASE WHEN g % 20 = 0 THEN 'refunded' ELSE 'settled' END,
           0.01, CASE WHEN g % 3 = 0 THEN 'not_found' ELSE 'found' END, 'history', t, t
    FROM generate_series(1, sqlc.arg(n)::int) g,
         LATERAL (SELECT now() - interval '365 days' + (g - 1) * (interval '365 days' / sqlc.arg(n)::int) AS t) ts
    ORDER BY g
    RETURNING created_at, state, cost_usd
)
INSERT INTO workspace_spend (workspace_id, month, spent_usd)
SELECT sqlc.arg(workspace_id)::bigint, date_trunc('month', created_at AT TIME ZONE 'UTC')::date, sum(cost_usd) FILTER (WHERE state = 'settled')
FROM calls
GROUP BY 2
ON CONFLICT (workspace_id, month) DO UPDATE SET spent_usd = excluded.spent_usd;
