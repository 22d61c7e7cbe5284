-- name: EnrichDoubt :many
-- For leads a tick has just claimed from another tick whose lease ran out
-- (it was killed, or lost its database, before recording them), the calls
-- that tick admitted and never settled:
--   * a call that may have gone out (it had no rate slot to wait for, or
--     its wait ended: started_at) is settled as billed, outcome in_doubt
--     (the provider may have answered and charged; the answer is lost),
--     and its finder joins the lead's doubted_by (doubted_at: now), so no
--     tick buys the same find again before RINDA_IN_DOUBT_RETRY_AFTER, or
--     `requeue --refind` when that is off;
--   * a call that waited for its rate slot and never started was never
--     made: refunded (outcome skipped), its cost given back to the month.
-- One statement: the ledger and the lead change together, or neither does
-- and the next claim finds the same calls. A late settle of the old tick
-- and this statement both need the row 'reserved': only one of them wins.
-- Keyed by provider_calls_reserved_lead_idx, which holds only calls in
-- flight; run only for leads whose previous holder never recorded them.
WITH lost AS (
    UPDATE provider_calls c
    SET state      = CASE WHEN c.call_at > c.created_at AND c.started_at IS NULL THEN 'refunded' ELSE 'settled' END,
        outcome    = CASE WHEN c.call_at > c.created_at AND c.started_at IS NULL THEN 'skipped' ELSE 'in_doubt' END,
        settled_at = now()
    WHERE c.lead_id = ANY(sqlc.arg(lead_ids)::bigint[]) AND c.state = 'reserved'
      AND c.tick_id IS DISTINCT FROM sqlc.arg(tick_id)::text
    RETURNING c.lead_id, c.provider, c.state, c.workspace_id, c.cost_usd, c.created_at
), refund AS (
    UPDATE workspace_spend s
    SET spent_usd = greatest(s.spent_usd - r.cost_usd, 0), updated_at = now()
    FROM (SELECT workspace_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS month, sum(cost_usd) AS cost_usd
          FROM lost WHERE state = 'refunded' AND cost_usd > 0 GROUP BY 1, 2) r
    WHERE s.workspace_id = r.workspace_id AND s.month = r.month
    RETURNING 1
), finders AS (
    SELECT d.lead_id, array_agg(DISTINCT d.provider) AS providers
    FROM lost d
    WHERE d.state = 'settled' AND d.provider = ANY(sqlc.arg(finders)::text[])
    GROUP BY d.lead_id
)
UPDATE lead_enrichment e
SET doubted_by = ARRAY(SELECT DISTINCT p FROM unnest(e.doubted_by || f.providers) p ORDER BY p),
    doubted_at = now()
FROM finders f
WHERE e.lead_id = f.lead_id AND e.locked_by = sqlc.arg(tick_id)::text
RETURNING e.lead_id, e.doubted_by, e.doubted_at;
