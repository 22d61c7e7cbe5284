-- name: GuardWorkspaceList :many
-- Workspaces with their ceiling, month-to-date spend, and this UTC month's
-- provider calls: made (every call that went out; a reservation given back
-- unused is not one) and billed (the ledger keeps its cost: settled, or
-- still reserved, as the spend counts it).
SELECT w.id, w.name, w.monthly_usd_ceiling, coalesce(s.spent_usd, 0)::float8 AS spent_usd,
       coalesce(c.made, 0)::bigint AS calls_made, coalesce(c.billed, 0)::bigint AS calls_billed
FROM workspaces w
LEFT JOIN workspace_spend s ON s.workspace_id = w.id
     AND s.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE pc.outcome IS DISTINCT FROM 'skipped') AS made,
           count(*) FILTER (WHERE pc.state <> 'refunded') AS billed
    FROM provider_calls pc
    WHERE pc.workspace_id = w.id
      AND pc.created_at >= (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
) c ON true
ORDER BY w.name;
