-- name: EmailMetricsMailboxes :many
-- Every mailbox with its running email totals (email_mailbox_totals, kept
-- by the email tick's settlements) and whether it sends nothing now
-- (disabled, or paused until later), for the metrics textfile.
SELECT w.name AS workspace, m.address,
       coalesce(t.sent, 0) AS sent, coalesce(t.failed, 0) AS failed, coalesce(t.deferred, 0) AS deferred,
       coalesce(t.delivery_unknown, 0) AS delivery_unknown,
       (m.status <> 'active' OR coalesce(m.paused_until > now(), false))::boolean AS paused
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
LEFT JOIN email_mailbox_totals t ON t.mailbox_id = m.id
ORDER BY w.name, m.address;
