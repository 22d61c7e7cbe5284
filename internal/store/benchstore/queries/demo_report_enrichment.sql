-- name: DemoReportEnrichment :many
-- Leads by enrichment status, and enriched leads by the provider that found
-- the address ('' for the other statuses).
SELECT e.status, coalesce(CASE WHEN e.status = 'enriched' THEN l.email_source END, '')::text AS source, count(*) AS leads
FROM lead_enrichment e
JOIN leads l ON l.id = e.lead_id
GROUP BY 1, 2;
