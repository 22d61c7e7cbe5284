-- name: BenchLeadsDue :exec
-- The claim benchmark's leads, spread over 1000 companies.
INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain)
SELECT sqlc.arg(workspace_id)::bigint, 'bench-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000), 'company' || (g % 1000) || '.example'
FROM generate_series(1, sqlc.arg(n)::int) g;
