-- name: EmailMailboxCampaigns :many
-- Campaigns a mailbox serves.
SELECT c.id
FROM campaign_mailboxes cm
JOIN campaigns c ON c.id = cm.campaign_id
WHERE cm.mailbox_id = $1
ORDER BY c.id;
