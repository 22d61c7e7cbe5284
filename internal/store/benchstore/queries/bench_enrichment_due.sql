-- name: BenchEnrichmentDue :exec
-- Queues every lead for enrichment, due an hour ago in id order and not
-- updated since, so one claim tick may take each of them.
INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
SELECT id, workspace_id, now() - interval '1 hour' + id * interval '1 microsecond', now() - interval '1 hour'
FROM leads;
