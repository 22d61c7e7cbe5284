-- name: EmailMailboxCampaigns :many
-- Campaigns a mailbox serves.
SELECT c.id
FROM campaign_mailboxes cm
JOIN campaigns c ON c.id = cm.campaign_id
WHERE cm.mailbox_id = sqlc.arg(mailbox_id)
ORDER BY c.id;
