-- name: SuppressionsInsert :execrows
-- Suppresses addresses (workspace, email, reason): they are never mailed
-- again. The one writer of suppressions outside the email tick's settle;
-- the addresses come canonical (address.Key), as leads store them and the
-- claim compares them.
INSERT INTO suppressions (workspace_id, email, reason)
SELECT u.workspace_id, u.email, u.reason
FROM (SELECT unnest(sqlc.arg(workspace_ids)::bigint[]) AS workspace_id, unnest(sqlc.arg(emails)::text[]) AS email,
             unnest(sqlc.arg(reasons)::text[]) AS reason) u
WHERE btrim(u.email) <> ''
ON CONFLICT (workspace_id, email) DO NOTHING;
