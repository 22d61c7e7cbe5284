-- name: SuppressionsForgetKeep :execrows
-- Keeps a forgotten address suppressed in each of the workspaces: a row
-- with only its hash (no address), reason 'forgotten', once per workspace.
INSERT INTO suppressions (workspace_id, email, email_sha256, reason)
SELECT w, NULL, sqlc.arg(email_sha256)::bytea, 'forgotten'
FROM unnest(sqlc.arg(workspace_ids)::bigint[]) AS w
ON CONFLICT DO NOTHING;
