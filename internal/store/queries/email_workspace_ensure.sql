-- name: EmailWorkspaceEnsure :one
-- Returns the workspace's id, creating it on first use.
WITH ins AS (
    INSERT INTO workspaces (name) VALUES (sqlc.arg(name))
    ON CONFLICT (name) DO NOTHING
    RETURNING id
)
SELECT id FROM ins
UNION ALL
SELECT id FROM workspaces WHERE name = sqlc.arg(name)
LIMIT 1;
