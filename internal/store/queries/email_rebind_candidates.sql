-- name: EmailRebindCandidates :many
-- Step-1 enrollments that have sent nothing and whose mailbox is gone from
-- the campaign, paused or disabled: they may move. Rows another tick holds
-- are left alone; the tick $2 may move its own.
SELECT e.id, e.lead_id
FROM enrollments e
WHERE e.campaign_id = sqlc.arg(campaign_id)
  AND e.status = 'active'
  AND e.current_step = 1
  AND NOT EXISTS (SELECT 1 FROM sends s WHERE s.enrollment_id = e.id AND s.status <> 'failed')
  AND (e.locked_until IS NULL OR e.locked_until <= now() OR e.locked_by = sqlc.arg(locked_by))
  AND (e.mailbox_id IS NULL OR e.mailbox_id NOT IN (
        SELECT m.id
        FROM campaign_mailboxes cm
        JOIN mailboxes m ON m.id = cm.mailbox_id
        WHERE cm.campaign_id = sqlc.arg(campaign_id)
          AND m.status = 'active' AND (m.paused_until IS NULL OR m.paused_until <= now())))
ORDER BY e.lead_id
FOR UPDATE OF e;
