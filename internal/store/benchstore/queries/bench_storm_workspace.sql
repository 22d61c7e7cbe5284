-- name: BenchStormWorkspace :one
-- The enrichment storm's workspace, beside whatever else the schema holds.
INSERT INTO workspaces (name) VALUES ('storm')
ON CONFLICT (name) DO UPDATE SET name = excluded.name
RETURNING id;
