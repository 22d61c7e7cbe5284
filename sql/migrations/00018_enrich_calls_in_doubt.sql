-- Calls in doubt (issue 24): a paid find is never bought twice.
--   * lead_enrichment.doubted_by: finders whose answer for the lead was
--     lost (a call admitted, maybe billed, never settled: the tick was
--     killed or lost its database between the answer and its record).
--     Like missed_by, no tick asks them again; unlike it, the lead does
--     not end not_found on their account but enrichment_failed, for an
--     operator: `requeue --refind` forgets them and asks again.
--   * provider_calls_reserved_lead_idx: the calls still reserved, by lead,
--     which a claim looks up for leads whose lease ran out in a tick that
--     never recorded them. Only calls in flight are in it, so it stays
--     small however long the ledger grows.

-- +goose Up
ALTER TABLE lead_enrichment ADD COLUMN doubted_by text[] NOT NULL DEFAULT '{}';

CREATE INDEX provider_calls_reserved_lead_idx ON provider_calls (lead_id) WHERE state = 'reserved';

-- +goose Down
DROP INDEX provider_calls_reserved_lead_idx;
ALTER TABLE lead_enrichment DROP COLUMN doubted_by;
