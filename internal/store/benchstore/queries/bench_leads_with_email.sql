-- name: BenchLeadsWithEmail :exec
-- The email benchmark's n leads with an address, in workspace bench.
INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain, email)
SELECT w.id, 'bench-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000),
       'company' || (g % 1000) || '.example', 'first' || g || '@company' || (g % 1000) || '.example'
FROM workspaces w, generate_series(1, sqlc.arg(n)::int) g
WHERE w.name = 'bench';
