-- name: OpsWhyEnrollment :one
-- One enrollment with everything that can hold its next step back: its
-- campaign and window, the lead's address and zone, the bound mailbox and the
-- slots of its cap in force taken at now, as the claim counts them
-- (mailbox_cap_slots; cap_today: the daily cap lowered by a warm-up ramp), a suppression, and the newest send.
-- The mailbox's gap is read through a second left join (only when it has a
-- gap), so sqlc types it as nullable.
SELECT e.id, e.status, e.current_step, e.next_send_at, e.attempts, e.locked_until, coalesce(e.locked_by, '') AS locked_by,
       coalesce(e.last_error, '') AS last_error, w.name AS workspace,
       c.id AS campaign_id, c.name AS campaign, c.status AS campaign_status,
       coalesce(c.window_timezone, '') AS window_timezone, coalesce(c.window_days, '{}') AS window_days,
       coalesce(to_char(c.window_start, 'HH24:MI'), '')::text AS window_start,
       coalesce(to_char(c.window_end, 'HH24:MI'), '')::text AS window_end,
       coalesce((SELECT max(st.step) FROM sequence_steps st WHERE st.campaign_id = c.id), 0)::integer AS steps,
       l.id AS lead_id, coalesce(l.external_id, '') AS lead_external_id, coalesce(l.email, '') AS lead_email,
       coalesce(l.timezone, '') AS lead_timezone,
       m.id AS mailbox_id, coalesce(m.address, '') AS mailbox_address, coalesce(m.status, '') AS mailbox_status,
       coalesce(m.cap_today, 0) AS mailbox_cap_today, m.paused_until AS mailbox_paused_until,
       coalesce(m.pause_reason, '') AS mailbox_pause_reason,
       gap.next_send_not_before AS mailbox_gap_until,
       (SELECT coalesce(sum(c.n), 0) FROM mailbox_cap_slots(m.id, sqlc.arg(now)::timestamptz) c)::bigint AS mailbox_sent_24h,
       coalesce((SELECT sp.reason FROM suppressions sp
                 WHERE sp.workspace_id = e.workspace_id AND sp.email_sha256 = address_sha256(l.email)
                 ORDER BY sp.email IS NULL LIMIT 1), '')::text AS suppressed,
       coalesce(ls.step, 0) AS last_send_step, coalesce(ls.status, '') AS last_send_status,
       coalesce(ls.error, '') AS last_send_error
FROM enrollments e
JOIN workspaces w ON w.id = e.workspace_id
JOIN campaigns c ON c.id = e.campaign_id
JOIN leads l ON l.id = e.lead_id
LEFT JOIN mailboxes m ON m.id = e.mailbox_id
LEFT JOIN mailboxes gap ON gap.id = m.id AND gap.gap_max > interval '0'
LEFT JOIN LATERAL (SELECT s.step, s.status, s.error FROM sends s
                   WHERE s.enrollment_id = e.id ORDER BY s.step DESC LIMIT 1) ls ON true
WHERE e.id = sqlc.arg(id);
