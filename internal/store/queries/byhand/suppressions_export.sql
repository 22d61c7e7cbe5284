-- The suppression list of workspace @workspace_id, oldest first, streamed row by row
-- (sqlc's typed :many would hold it all in memory). A forgotten person's
-- row has no address, only its hash.
SELECT coalesce(email, ''), email_sha256, reason, created_at
FROM suppressions
WHERE workspace_id = @workspace_id
ORDER BY created_at, email_sha256, email NULLS FIRST;
