-- name: LeadsWorkspaceEnsure :one
-- Returns the workspace's id, creating it when missing. The no-op update
-- makes RETURNING see an existing row too, without a second query.
INSERT INTO workspaces (name) VALUES (sqlc.arg(name))
ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
RETURNING id, (xmax = 0) AS created;
