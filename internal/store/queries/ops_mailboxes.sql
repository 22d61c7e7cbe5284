-- name: OpsMailboxes :many
-- Mailboxes with the slots of their cap taken at now, counted as the email
-- claim counts them (mailbox_cap_slots: sends of the rolling 24 hours that
-- did not fail, and rows claimed but not yet sending), optionally of one
-- workspace or one campaign. cap_today is the cap in force (the daily cap
-- lowered by a warm-up ramp); the ramp's next growth shows while the ramp,
-- not the daily cap or its max, holds the cap. The ramp's settings are
-- there for the drain estimate, which follows its growth. recent_sends
-- and recent_bounces are the bounce-rate guard's window: its last
-- bounce_window sends that reached a server, and the hard bounces among
-- them (counted as email_mailbox_bounces.sql counts them).
SELECT m.id, w.name AS workspace, m.address, m.status, m.daily_cap, m.paused_until, coalesce(m.pause_reason, '') AS pause_reason,
       coalesce(m.cap_today, 0) AS cap_today,
       -- A subquery rather than CASE, so sqlc types it as a nullable time.
       (SELECT r.ramp_next_at FROM mailboxes r
        WHERE r.id = m.id
          AND r.ramp_start > 0
          AND r.cap_today < CASE WHEN r.daily_cap = 0 THEN r.ramp_max ELSE least(r.ramp_max, r.daily_cap) END) AS ramp_next_at,
       (SELECT coalesce(sum(c.n), 0) FROM mailbox_cap_slots(m.id, sqlc.arg(now)::timestamptz) c)::bigint AS sent_24h,
       m.ramp_start, m.ramp_step, m.ramp_every, m.ramp_max, m.ramp_level,
       m.ramp_next_at AS ramp_due_at,
       b.sends AS recent_sends, b.bounces AS recent_bounces
FROM mailboxes m
JOIN workspaces w ON w.id = m.workspace_id
CROSS JOIN LATERAL (
    SELECT count(*) AS sends, count(*) FILTER (WHERE r.bounced) AS bounces
    FROM (SELECT (s.bounced_at IS NOT NULL) AS bounced
          FROM sends s
          WHERE s.mailbox_id = m.id
            AND (s.status IN ('sent', 'delivery_unknown') OR s.bounced_at IS NOT NULL)
          ORDER BY s.created_at DESC, s.id DESC
          LIMIT sqlc.arg(bounce_window)::int) r) b
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR m.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(campaign_id)::bigint IS NULL OR EXISTS (SELECT 1 FROM campaign_mailboxes cm
                                     WHERE cm.mailbox_id = m.id AND cm.campaign_id = sqlc.narg(campaign_id)))
ORDER BY w.name, m.address;
