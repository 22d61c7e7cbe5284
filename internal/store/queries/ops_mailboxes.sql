-- name: OpsMailboxes :many
-- Mailboxes with their sends in the 24 hours before $1 (the email tick's
-- daily cap is a rolling 24 hours; failed sends do not count), optionally of
-- one workspace ($2) or one campaign ($3). cap_today is the cap in force
-- (the daily cap lowered by a warm-up ramp); the ramp's next growth shows
-- while the ramp, not the daily cap or its max, holds the cap.
SELECT m.id, w.name, m.address, m.status, m.daily_cap, m.paused_until, coalesce(m.pause_reason, ''),
       m.cap_today,
       CASE WHEN m.ramp_start > 0 AND m.cap_today < CASE WHEN m.daily_cap = 0 THEN m.ramp_max
                                                         ELSE least(m.ramp_max, m.daily_cap) END
            THEN m.ramp_next_at END,
       (SELECT count(*)
        FROM sends s
        WHERE s.mailbox_id = m.id
          AND s.status <> 'failed'
          AND s.created_at > $1::timestamptz - interval '24 hours'
          AND s.created_at <= $1::timestamptz) AS sent_24h
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
WHERE ($2::bigint IS NULL OR m.workspace_id = $2)
  AND ($3::bigint IS NULL OR EXISTS (SELECT 1 FROM campaign_mailboxes cm
                                     WHERE cm.mailbox_id = m.id AND cm.campaign_id = $3))
ORDER BY w.name, m.address;
