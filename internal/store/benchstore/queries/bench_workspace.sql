-- name: BenchWorkspace :one
INSERT INTO workspaces (name) VALUES ('bench') RETURNING id;
