-- name: BenchHistoryEvents :exec
-- n delivered events of the workspace over a year, in id order.
INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload, alert, created_at, next_attempt_at, delivered_at)
SELECT (ARRAY['quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached'])[1 + g % 4], sqlc.arg(workspace_id)::bigint, 'findymail',
       'history:' || g, jsonb_build_object('episode', g), g % 4 = 0, t, t, t + interval '1 minute'
FROM generate_series(1, sqlc.arg(n)::int) g,
     LATERAL (SELECT now() - interval '365 days' + (g - 1) * (interval '365 days' / sqlc.arg(n)::int) AS t) ts
ORDER BY g;
