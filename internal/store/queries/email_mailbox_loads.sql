-- name: EmailMailboxLoads :many
-- The campaign's mailboxes with their binder view: active enrollments bound
-- to each, and whether it may take more now.
SELECT m.id, m.address,
       (m.status = 'active' AND (m.paused_until IS NULL OR m.paused_until <= now()))::boolean AS healthy,
       count(e.id) AS load
FROM campaign_mailboxes cm
JOIN mailboxes m ON m.id = cm.mailbox_id
LEFT JOIN enrollments e ON e.campaign_id = cm.campaign_id AND e.mailbox_id = m.id AND e.status = 'active'
WHERE cm.campaign_id = sqlc.arg(campaign_id)
GROUP BY m.id
ORDER BY m.id;
