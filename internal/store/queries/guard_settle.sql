-- name: GuardSettle :one
-- Settle or refund one ledger row, give a refund back to the month's spend,
-- and clear the breaker's failure streak after a clean answer. Touching the
-- breaker only when the streak is non-zero keeps the hot path free of
-- writes to a row every call shares.
--
-- $1 provider_calls.id, $2 new state ('settled' | 'refunded'), $3 outcome,
-- $4 workspace_id, $5 provider, $6 clean answer (reset the streak).
WITH call AS (
    UPDATE provider_calls
    SET state = sqlc.arg(state)::text, outcome = sqlc.arg(outcome)::text, settled_at = now()
    WHERE id = sqlc.arg(call_id)::bigint AND state = 'reserved'
    RETURNING workspace_id, cost_usd, created_at
), refund AS (
    UPDATE workspace_spend s
    SET spent_usd = greatest(s.spent_usd - call.cost_usd, 0), updated_at = now()
    FROM call
    WHERE sqlc.arg(state)::text = 'refunded' AND call.cost_usd > 0
      AND s.workspace_id = call.workspace_id
      AND s.month = date_trunc('month', call.created_at AT TIME ZONE 'UTC')::date
    RETURNING 1
), healthy AS (
    UPDATE breakers
    SET consecutive_failures = 0, updated_at = now()
    WHERE sqlc.arg(clean)::boolean AND workspace_id = sqlc.arg(workspace_id)::bigint AND provider = sqlc.arg(provider)::text AND consecutive_failures > 0
    RETURNING 1
)
SELECT (SELECT count(*) FROM call) AS settled, (SELECT count(*) FROM refund) AS refunded, (SELECT count(*) FROM healthy) AS healed;
