-- name: EmailCampaignMailboxIDs :many
-- The campaign's mailboxes, for loading the campaign. Not
-- email_mailbox_loads.sql: its count of each mailbox's active enrollments
-- reads the campaign's whole backlog, which every email tick paid once per
-- campaign at its start (issue 30: 16 ticks starting at once spent a third
-- of the database's CPU in it) to get only the ids.
SELECT cm.mailbox_id
FROM campaign_mailboxes cm
WHERE cm.campaign_id = sqlc.arg(campaign_id)
ORDER BY cm.mailbox_id;
