-- name: EnrichDoubt :many
-- For leads a tick has just claimed from another tick whose lease ran out
-- (it was killed, or lost its database, before recording them): settles
-- the calls that tick admitted and never settled as billed, outcome
-- in_doubt (the provider may have answered and charged; the answer is
-- lost), and keeps the finders among them in the lead's doubted_by, so no
-- tick buys the same find again until `requeue --refind`. One statement:
-- the ledger and the lead change together, or neither does and the next
-- claim finds the same calls. A late settle of the old tick and this
-- statement both need the row 'reserved': only one of them wins.
-- Keyed by provider_calls_reserved_lead_idx, which holds only calls in
-- flight; run only for leads whose previous holder never recorded them.
WITH doubt AS (
    UPDATE provider_calls c
    SET state = 'settled', outcome = 'in_doubt', settled_at = now()
    WHERE c.lead_id = ANY(sqlc.arg(lead_ids)::bigint[]) AND c.state = 'reserved'
      AND c.tick_id IS DISTINCT FROM sqlc.arg(tick_id)::text
    RETURNING c.lead_id, c.provider
), finders AS (
    SELECT d.lead_id, array_agg(DISTINCT d.provider) AS providers
    FROM doubt d
    WHERE d.provider = ANY(sqlc.arg(finders)::text[])
    GROUP BY d.lead_id
)
UPDATE lead_enrichment e
SET doubted_by = ARRAY(SELECT DISTINCT p FROM unnest(e.doubted_by || f.providers) p ORDER BY p)
FROM finders f
WHERE e.lead_id = f.lead_id AND e.locked_by = sqlc.arg(tick_id)::text
RETURNING e.lead_id, e.doubted_by;
