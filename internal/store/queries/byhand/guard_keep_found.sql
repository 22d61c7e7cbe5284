-- Keep a group's billed finds with their leads (lead_enrichment.found_email
-- and found_by) as soon as the calls are settled, in the settle's batch, so
-- an address paid for survives a crash before the tick records the lead's
-- outcome: the next attempt verifies it instead of buying it again. Sent
-- only for a group with finds: a statement on lead_enrichment per settle
-- would be one write too many for misses. A lead that holds a find already
-- keeps it.
--
-- @lead_ids and the addresses found for them (@emails), @provider the finder.
UPDATE lead_enrichment e
SET found_email = k.email, found_by = @provider::text
FROM unnest(@lead_ids::bigint[], @emails::text[]) AS k(lead_id, email)
WHERE e.lead_id = k.lead_id AND e.found_email IS NULL;
