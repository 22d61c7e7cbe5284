-- Calls in doubt (issue 24): a paid find is never bought twice.
--   * lead_enrichment.doubted_by: finders whose answer for the lead was
--     lost (a call admitted, maybe billed, never settled: the tick was
--     killed or lost its database between the answer and its record).
--     Like missed_by, no tick asks them again; unlike it, the lead does
--     not end not_found on their account but enrichment_failed, for an
--     operator: `requeue --refind` forgets them and asks again.
--   * provider_calls.call_at, started_at: when the admitted call may go
--     out (its rate slot; the admission itself when it need not wait), and,
--     for a call that waited for its slot, when the wait ended and the
--     call went out. A call still reserved that waited and never started
--     was never made: a claim refunds it rather than doubting it.
--   * provider_calls_reserved_lead_idx: the calls still reserved, by lead,
--     which a claim looks up for leads whose lease ran out in a tick that
--     never recorded them. Only calls in flight are in it, so it stays
--     small however long the ledger grows.

-- +goose Up
ALTER TABLE lead_enrichment ADD COLUMN doubted_by text[] NOT NULL DEFAULT '{}';

ALTER TABLE provider_calls ADD COLUMN call_at timestamptz, ADD COLUMN started_at timestamptz;

CREATE INDEX provider_calls_reserved_lead_idx ON provider_calls (lead_id) WHERE state = 'reserved';

-- +goose Down
DROP INDEX provider_calls_reserved_lead_idx;
ALTER TABLE provider_calls DROP COLUMN call_at, DROP COLUMN started_at;
ALTER TABLE lead_enrichment DROP COLUMN doubted_by;
