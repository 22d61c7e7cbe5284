-- name: DemoLiveStatus :one
-- The demo's live status line: messages sent and leads by enrichment state.
SELECT (SELECT count(*) FROM sends WHERE status = 'sent') AS sent,
       count(*) FILTER (WHERE status IN ('pending', 'in_progress')) AS pending,
       count(*) FILTER (WHERE status = 'enriched') AS enriched,
       count(*) FILTER (WHERE status = 'unreachable') AS unreachable
FROM lead_enrichment;
