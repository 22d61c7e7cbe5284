-- name: GuardMetricsSpend :many
-- Month-to-date spend per workspace (UTC month).
SELECT w.name, coalesce(s.spent_usd, 0)::float8 AS spent_usd
FROM workspaces w
LEFT JOIN workspace_spend s ON s.workspace_id = w.id
     AND s.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date;
