-- name: OpsSpend :many
-- Provider spend per workspace since the month start (the UTC month's start) against its
-- ceiling. The guards keep a month-to-date counter (workspace_spend) that the
-- ceiling check reads; it wins when present. Otherwise the ledger is summed:
-- reserved calls count, they are money already committed.
SELECT w.id, w.name AS workspace, w.monthly_usd_ceiling AS ceiling_usd,
       coalesce((SELECT s.spent_usd
                 FROM workspace_spend s
                 WHERE s.workspace_id = w.id
                   AND s.month = (sqlc.arg(month_start)::timestamptz AT TIME ZONE 'UTC')::date),
                (SELECT sum(pc.cost_usd)
                 FROM provider_calls pc
                 WHERE pc.workspace_id = w.id
                   AND pc.created_at >= sqlc.arg(month_start)
                   AND pc.state IN ('reserved', 'settled')),
                0)::float8 AS spent,
       -- What calls still in flight reserve of it: a miss among them is
       -- refunded, so while they alone hold the ceiling the guard refuses
       -- for a minute, not the month (guard_admit.sql, in_flight).
       -- provider_calls_reserved_workspace_idx holds only these rows.
       (SELECT coalesce(sum(pc.cost_usd), 0)
        FROM provider_calls pc
        WHERE pc.workspace_id = w.id
          AND pc.state = 'reserved'
          AND pc.created_at >= sqlc.arg(month_start))::float8 AS in_flight
FROM workspaces w
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR w.id = sqlc.narg(workspace_id))
ORDER BY w.name;
