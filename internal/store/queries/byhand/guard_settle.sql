-- Settle or refund a group of one (workspace, provider)'s ledger rows in
-- one statement: each row's new state and outcome, the refunds given back
-- to their months' spend (summed, one write per month), and the breaker's
-- failure streak cleared after a clean answer (touched only when the
-- streak is non-zero, so the hot path does not write a row every call
-- shares). Only rows still reserved change. Billed finds are kept by
-- guard_keep_found, sent in the same batch (one transaction), whose commit
-- is durable whatever the server's synchronous_commit (set_config(...,
-- true) holds until the transaction commits): lost in a crash, the paid
-- find would be bought again (issue 24).
--
-- @call_ids, @states, @outcomes: one element per call; @clean: a clean
-- answer among them (clear the streak); @reserved: the state settled from
-- ('reserved').
WITH s AS (
    SELECT * FROM unnest(@call_ids::bigint[], @states::text[], @outcomes::text[]) AS s(id, state, outcome)
), call AS (
    UPDATE provider_calls pc
    SET state = s.state, outcome = s.outcome, settled_at = now()
    FROM s
    -- On the key (@call_ids) as well as by the join: the plan, made once while
    -- the ledger was small, walks provider_calls first, and with this it
    -- reads only the group's rows (without it, all of its key per group).
    -- The state as a parameter (@reserved, 'reserved'), which the generic plan
    -- cannot match to the partial indexes of reserved calls: through one
    -- it read every call in flight, and every settled one not yet
    -- vacuumed, per group (TestGuardSettleReachesItsCallsByKey).
    WHERE pc.id = ANY (@call_ids::bigint[]) AND pc.id = s.id AND pc.state = @reserved::text
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
    WHERE @clean::boolean AND workspace_id = @workspace_id::bigint
      AND provider = @provider::text AND consecutive_failures > 0
    RETURNING 1
)
SELECT (SELECT count(*) FROM call), (SELECT count(*) FROM refund), (SELECT count(*) FROM healthy),
       set_config('synchronous_commit', 'on', true);
