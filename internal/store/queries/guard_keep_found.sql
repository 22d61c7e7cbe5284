-- name: GuardKeepFound :execrows
-- Keep a finder's billed find with its lead (lead_enrichment.found_email)
-- as soon as the call is settled, so an address paid for survives a crash
-- before the tick records the lead's outcome: the next attempt verifies it
-- instead of buying it again. Run only for a found address: a statement
-- per call on lead_enrichment would be one write too many for misses.
UPDATE lead_enrichment
SET found_email = sqlc.arg(email), found_by = sqlc.arg(provider)
WHERE lead_id = sqlc.arg(lead_id) AND found_email IS NULL;
