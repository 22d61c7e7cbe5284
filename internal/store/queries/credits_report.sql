-- name: CreditsReport :many
-- Per workspace and provider: whose key it uses (its own or the host's),
-- that account's last credits reading, and from the ledger the
-- workspace's spend this UTC month, its calls in the last hour (made,
-- and billed), and its possible second charges this month (a finder asked
-- again after its answer was lost: provider_calls.second_charge). Each workspace's ledger is read through its
-- (workspace_id, created_at) index.
SELECT w.id AS workspace_id, w.name AS workspace, pr.provider,
       (k.workspace_id IS NOT NULL)::boolean AS own_key,
       pc.credits, pc.read_at, pc.credits_at, pc.read_error, pc.reset_at, pc.low,
       coalesce(c.spent_usd, 0)::float8 AS month_spent_usd,
       coalesce(c.calls_hour, 0)::bigint AS calls_last_hour,
       coalesce(c.billed_hour, 0)::bigint AS billed_last_hour,
       coalesce(c.second_charges, 0)::bigint AS second_charges_month
FROM workspaces w
CROSS JOIN (SELECT unnest(sqlc.arg(providers)::text[])::text AS provider) pr
LEFT JOIN workspace_provider_keys k ON k.workspace_id = w.id AND k.provider = pr.provider
LEFT JOIN provider_credits pc
       ON pc.account = CASE WHEN k.workspace_id IS NULL THEN pr.provider ELSE pr.provider || '/ws/' || w.id END
LEFT JOIN LATERAL (
    SELECT sum(l.cost_usd) FILTER (WHERE l.state <> 'refunded'
                                     AND l.created_at >= (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) AS spent_usd,
           count(*) FILTER (WHERE l.outcome IS DISTINCT FROM 'skipped' AND l.created_at > now() - interval '1 hour') AS calls_hour,
           count(*) FILTER (WHERE l.state <> 'refunded' AND l.created_at > now() - interval '1 hour') AS billed_hour,
           count(*) FILTER (WHERE l.second_charge AND l.state <> 'refunded'
                              AND l.created_at >= (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) AS second_charges
    FROM provider_calls l
    WHERE l.workspace_id = w.id AND l.provider = pr.provider
      AND l.created_at >= least(date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', now() - interval '1 hour')
) c ON true
WHERE sqlc.narg(workspace_id)::bigint IS NULL OR w.id = sqlc.narg(workspace_id)
ORDER BY w.name, pr.provider;
