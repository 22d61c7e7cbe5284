-- In-doubt calls recover by themselves (issue 39):
--   * lead_enrichment.doubted_at: when the lead's doubted_by last grew. A
--     finder in doubt is asked again RINDA_IN_DOUBT_RETRY_AFTER after it
--     (default 24h; off keeps the hold for `requeue --refind`).
--   * provider_calls.second_charge: the call asks a finder again for a
--     lead whose earlier answer from it was lost: the provider may bill
--     the same find twice. `rindactl providers` counts them.
--   * provider_credits.credits_at: when the credits figure was read (a
--     failed reading moves read_at, not it). The ledger's calls billed
--     since come off it, and `providers` shows its age.

-- +goose Up
ALTER TABLE lead_enrichment ADD COLUMN doubted_at timestamptz;
ALTER TABLE provider_calls ADD COLUMN second_charge boolean NOT NULL DEFAULT false;
ALTER TABLE provider_credits ADD COLUMN credits_at timestamptz;
UPDATE provider_credits SET credits_at = read_at WHERE credits IS NOT NULL;

-- +goose Down
ALTER TABLE provider_credits DROP COLUMN credits_at;
ALTER TABLE provider_calls DROP COLUMN second_charge;
ALTER TABLE lead_enrichment DROP COLUMN doubted_at;
