-- name: GuardSettle :one
-- Settle or refund one ledger row, give a refund back to the month's spend,
-- keep a billed find with its lead, and clear the breaker's failure streak
-- after a clean answer. Touching the breaker only when the streak is
-- non-zero keeps the hot path free of writes to a row every call shares.
--
-- The find is kept in the statement that bills it (issue 24): settled
-- without its address, a crash or a lost database between two statements
-- left a paid find that the next tick bought again (the invariant
-- harness's seed 20057). It waits in found_email until the lead's outcome
-- is recorded, and a later attempt verifies it instead of buying it. Both
-- need the row 'reserved', so a retried settle, or one that lost the race
-- to a claim that settled the call in doubt (enrich_doubt), changes
-- nothing.
--
-- The commit is durable whatever the server's synchronous_commit
-- (set_config(..., true) holds until this statement's transaction
-- commits): a settle lost in a crash would lose the find it paid for.
--
-- $1 provider_calls.id, $2 new state ('settled' | 'refunded'), $3 outcome,
-- $4 workspace_id, $5 provider, $6 clean answer (reset the streak), $7 the
-- address a finder found ('' for none).
WITH call AS (
    UPDATE provider_calls
    SET state = $2::text, outcome = $3::text, settled_at = now()
    WHERE id = $1::bigint AND state = 'reserved'
    RETURNING workspace_id, lead_id, provider, cost_usd, created_at
), refund AS (
    UPDATE workspace_spend s
    SET spent_usd = greatest(s.spent_usd - call.cost_usd, 0), updated_at = now()
    FROM call
    WHERE $2::text = 'refunded' AND call.cost_usd > 0
      AND s.workspace_id = call.workspace_id
      AND s.month = date_trunc('month', call.created_at AT TIME ZONE 'UTC')::date
    RETURNING 1
), kept AS (
    UPDATE lead_enrichment e
    SET found_email = $7::text, found_by = call.provider
    FROM call
    WHERE $2::text = 'settled' AND $7::text <> ''
      AND e.lead_id = call.lead_id AND e.found_email IS NULL
    RETURNING 1
), healthy AS (
    UPDATE breakers
    SET consecutive_failures = 0, updated_at = now()
    WHERE $6::boolean AND workspace_id = $4::bigint AND provider = $5::text AND consecutive_failures > 0
    RETURNING 1
)
SELECT (SELECT count(*) FROM call), (SELECT count(*) FROM refund), (SELECT count(*) FROM healthy),
       (SELECT count(*) FROM kept), set_config('synchronous_commit', 'on', true) AS durable;
