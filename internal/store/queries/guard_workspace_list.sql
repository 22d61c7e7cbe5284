-- name: GuardWorkspaceList :many
-- Workspaces with their ceiling, month-to-date spend and calls (UTC month).
SELECT w.id, w.name, w.monthly_usd_ceiling, coalesce(s.spent_usd, 0)::float8 AS spent_usd,
       (SELECT count(*) FROM provider_calls c
        WHERE c.workspace_id = w.id AND c.state <> 'refunded'
          AND c.created_at >= (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'))
FROM workspaces w
LEFT JOIN workspace_spend s ON s.workspace_id = w.id
     AND s.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date
ORDER BY w.name;
