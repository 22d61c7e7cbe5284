-- name: DemoInboxLeadsSeed :exec
-- Seeds the demo's inbox act with a number of leads that have an
-- address, in one workspace.
INSERT INTO leads (workspace_id, first_name, company, email)
SELECT w.id, 'Lead' || g, 'Company' || g, 'lead' || g || '@customer.example'
FROM workspaces w, generate_series(1, sqlc.arg(leads)::int) g
WHERE w.name = sqlc.arg(workspace);
