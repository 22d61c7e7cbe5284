-- name: DemoReportSends :many
-- Messages sent per mailbox of one workspace, mailboxes that sent none
-- included.
SELECT m.address, count(s.id) AS sent
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
LEFT JOIN sends s ON s.mailbox_id = m.id AND s.status = 'sent'
WHERE w.name = sqlc.arg(workspace)
GROUP BY m.address;
