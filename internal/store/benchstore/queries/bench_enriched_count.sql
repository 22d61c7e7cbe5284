-- name: BenchEnrichedCount :one
-- Leads whose enrichment ended (found or not), and the ledger's calls.
SELECT (SELECT count(*) FROM lead_enrichment WHERE status IN ('enriched', 'not_found')) AS done,
       (SELECT count(*) FROM provider_calls) AS calls;
