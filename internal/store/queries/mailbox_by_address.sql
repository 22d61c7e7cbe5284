-- name: MailboxByAddress :many
-- The mailboxes with this address, in one workspace or in all ('').
SELECT m.id, w.name AS workspace
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
WHERE lower(m.address) = lower(sqlc.arg(address)::text)
  AND (sqlc.arg(workspace)::text = '' OR w.name = sqlc.arg(workspace)::text)
ORDER BY m.id;
