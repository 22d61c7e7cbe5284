-- name: OpsWhyMailbox :many
-- Mailboxes with this address (case-insensitive), of one workspace when
-- workspace_id is set, with their inbox checkpoint (nil fields without one).
SELECT m.id, m.workspace_id, w.name AS workspace, m.address, m.status, m.paused_until, coalesce(m.pause_reason, '')::text AS pause_reason,
       (m.imap_url IS NOT NULL)::boolean AS reads_inbox,
       c.uid_validity, c.last_uid, c.checked_at, c.last_error, c.locked_by, c.locked_until
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
LEFT JOIN inbox_checkpoints c ON c.mailbox_id = m.id
WHERE lower(m.address) = lower(sqlc.arg(address)::text)
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR m.workspace_id = sqlc.narg(workspace_id))
ORDER BY w.name;
