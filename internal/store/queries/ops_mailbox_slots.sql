-- name: OpsMailboxSlots :many
-- When the taken slots of each capped mailbox's cap free up, as of now
-- (mailbox_cap_slots, as the email claim counts them), for the drain
-- estimate; optionally of one workspace or one campaign.
SELECT m.id AS mailbox_id, c.frees_at::timestamptz AS frees_at, c.n::bigint AS n
FROM mailboxes m
CROSS JOIN LATERAL mailbox_cap_slots(m.id, sqlc.arg(now)::timestamptz) c
WHERE m.cap_today > 0
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR m.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(campaign_id)::bigint IS NULL OR EXISTS (SELECT 1 FROM campaign_mailboxes cm
                                     WHERE cm.mailbox_id = m.id AND cm.campaign_id = sqlc.narg(campaign_id)))
ORDER BY m.id, c.frees_at;
