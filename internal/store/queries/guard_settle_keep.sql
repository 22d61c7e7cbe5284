-- name: GuardSettleKeep :one
-- Settle or refund a group of one (workspace, provider)'s ledger rows in
-- one statement: each row's new state and outcome, the refunds given back
-- to their months' spend (summed, one write per month), the breaker's
-- failure streak cleared after a clean answer (touched only when the
-- streak is non-zero, so the hot path does not write a row every call
-- shares), and each billed find kept with its lead (lead_enrichment.
-- found_email) at once, so an address paid for survives a crash before the
-- tick records the lead's outcome: the next attempt verifies it instead of
-- buying it again. Only rows still reserved change. guard_settle is the
-- same without the finds, for groups that have none.
WITH s AS (
    SELECT unnest(sqlc.arg(ids)::bigint[]) AS id, unnest(sqlc.arg(states)::text[]) AS state,
           unnest(sqlc.arg(outcomes)::text[]) AS outcome
), call AS (
    UPDATE provider_calls pc
    SET state = s.state, outcome = s.outcome, settled_at = now()
    FROM s
    WHERE pc.id = s.id AND pc.state = 'reserved'
    RETURNING pc.workspace_id, pc.cost_usd, pc.created_at, pc.state
), refund AS (
    UPDATE workspace_spend w
    SET spent_usd = greatest(w.spent_usd - r.cost, 0), updated_at = now()
    FROM (
        SELECT workspace_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS month, sum(cost_usd) AS cost
        FROM call
        WHERE state = 'refunded' AND cost_usd > 0
        GROUP BY 1, 2
    ) r
    WHERE w.workspace_id = r.workspace_id AND w.month = r.month
    RETURNING 1
), healthy AS (
    UPDATE breakers
    SET consecutive_failures = 0, updated_at = now()
    WHERE sqlc.arg(clean)::boolean AND workspace_id = sqlc.arg(workspace_id)::bigint
      AND provider = sqlc.arg(provider)::text AND consecutive_failures > 0
    RETURNING 1
), kept AS (
    UPDATE lead_enrichment e
    SET found_email = k.email, found_by = sqlc.arg(provider)::text
    FROM (SELECT unnest(sqlc.arg(keep_leads)::bigint[]) AS lead_id, unnest(sqlc.arg(keep_emails)::text[]) AS email) k
    WHERE e.lead_id = k.lead_id AND e.found_email IS NULL
    RETURNING 1
)
SELECT (SELECT count(*) FROM call) AS settled, (SELECT count(*) FROM refund) AS refunds,
       (SELECT count(*) FROM healthy) AS healed, (SELECT count(*) FROM kept) AS kept;
