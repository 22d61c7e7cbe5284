-- name: EmailCampaignMailboxesSet :exec
-- Makes $2 the exact set of the campaign's mailboxes.
WITH removed AS (
    DELETE FROM campaign_mailboxes
    WHERE campaign_id = $1 AND mailbox_id <> ALL ($2::bigint[])
)
INSERT INTO campaign_mailboxes (campaign_id, mailbox_id)
SELECT $1, unnest($2::bigint[])
ON CONFLICT DO NOTHING;
