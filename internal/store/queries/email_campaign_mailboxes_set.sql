-- name: EmailCampaignMailboxesSet :exec
-- Makes $2 the exact set of the campaign's mailboxes.
WITH removed AS (
    DELETE FROM campaign_mailboxes
    WHERE campaign_id = sqlc.arg(campaign_id) AND mailbox_id <> ALL (sqlc.arg(mailbox_ids)::bigint[])
)
INSERT INTO campaign_mailboxes (campaign_id, mailbox_id)
SELECT sqlc.arg(campaign_id), unnest(sqlc.arg(mailbox_ids)::bigint[])
ON CONFLICT DO NOTHING;
