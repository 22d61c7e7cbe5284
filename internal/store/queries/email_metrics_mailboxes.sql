-- name: EmailMetricsMailboxes :many
-- Every mailbox with its running email totals (email_mailbox_totals, kept
-- by the email tick's settlements) and whether it sends nothing now
-- (disabled, or paused until later), for the metrics textfile.
SELECT w.name, m.address,
       coalesce(t.sent, 0), coalesce(t.failed, 0), coalesce(t.deferred, 0), coalesce(t.delivery_unknown, 0),
       m.status <> 'active' OR coalesce(m.paused_until > now(), false)
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
LEFT JOIN email_mailbox_totals t ON t.mailbox_id = m.id
ORDER BY w.name, m.address;
