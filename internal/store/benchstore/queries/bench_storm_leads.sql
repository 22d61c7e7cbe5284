-- name: BenchStormLeads :exec
-- The storm's leads, spread over 1000 companies, each queued for
-- enrichment an hour ago in id order, in one statement.
WITH l AS (
    INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain)
    SELECT sqlc.arg(workspace_id)::bigint, 'storm-' || g, 'First' || g, 'Last' || g,
           'Company ' || (g % 1000), 'company' || (g % 1000) || '.example'
    FROM generate_series(1, sqlc.arg(n)::int) g
    RETURNING id, workspace_id
)
INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
SELECT id, workspace_id, now() - interval '1 hour' + id * interval '1 microsecond', now() - interval '1 hour'
FROM l;
