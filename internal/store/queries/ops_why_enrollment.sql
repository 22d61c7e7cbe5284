-- name: OpsWhyEnrollment :one
-- One enrollment with everything that can hold its next step back: its
-- campaign and window, the lead's address and zone, the bound mailbox and its
-- sends in the 24 hours before $2 against its cap in force (cap_today: the
-- daily cap lowered by a warm-up ramp), a suppression, and the newest send.
SELECT e.id, e.status, e.current_step, e.next_send_at, e.attempts, e.locked_until, coalesce(e.locked_by, ''),
       coalesce(e.last_error, ''), w.name,
       c.id, c.name, c.status,
       coalesce(c.window_timezone, ''), coalesce(c.window_days, '{}'),
       coalesce(to_char(c.window_start, 'HH24:MI'), ''), coalesce(to_char(c.window_end, 'HH24:MI'), ''),
       coalesce((SELECT max(st.step) FROM sequence_steps st WHERE st.campaign_id = c.id), 0),
       l.id, coalesce(l.external_id, ''), coalesce(l.email, ''), coalesce(l.timezone, ''),
       m.id, coalesce(m.address, ''), coalesce(m.status, ''), coalesce(m.cap_today, 0), m.paused_until,
       coalesce(m.pause_reason, ''),
       CASE WHEN m.gap_max > interval '0' THEN m.next_send_not_before END,
       (SELECT count(*) FROM sends s
        WHERE s.mailbox_id = m.id AND s.status <> 'failed'
          AND s.created_at > $2::timestamptz - interval '24 hours' AND s.created_at <= $2),
       coalesce((SELECT sp.reason FROM suppressions sp
                 WHERE sp.workspace_id = e.workspace_id AND sp.email = lower(l.email)), ''),
       coalesce(ls.step, 0), coalesce(ls.status, ''), coalesce(ls.error, '')
FROM enrollments e
JOIN workspaces w ON w.id = e.workspace_id
JOIN campaigns c ON c.id = e.campaign_id
JOIN leads l ON l.id = e.lead_id
LEFT JOIN mailboxes m ON m.id = e.mailbox_id
LEFT JOIN LATERAL (SELECT s.step, s.status, s.error FROM sends s
                   WHERE s.enrollment_id = e.id ORDER BY s.step DESC LIMIT 1) ls ON true
WHERE e.id = $1;
