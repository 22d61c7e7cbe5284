-- name: BenchRoundLeads :exec
-- One measured round of the enrichment drain: n leads of the workspace
-- without an address, external ids prefixed tag, due an hour ago in id order.
WITH leads_in AS (
    INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain)
    SELECT sqlc.arg(workspace_id)::bigint, sqlc.arg(tag)::text || '-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000), 'company' || (g % 1000) || '.example'
    FROM generate_series(1, sqlc.arg(n)::int) g
    RETURNING id
)
INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
SELECT id, sqlc.arg(workspace_id)::bigint, now() - interval '1 hour' + id * interval '1 microsecond', now() - interval '1 hour'
FROM leads_in;
