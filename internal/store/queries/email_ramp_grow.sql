-- name: EmailRampGrow :execrows
-- Grows the warm-up ramps whose next step is due: one level per period,
-- until the cap reaches ramp_max. A mailbox that bounced (an enrollment it
-- sent to ended 'bounced', by SMTP or by a DSN the inbox tick read) or was
-- paused during the period does not grow: its period starts over, so the
-- ramp waits for one clean period. A ramp far behind (no tick for days)
-- catches up one level per tick.
UPDATE mailboxes m
SET ramp_level   = m.ramp_level + CASE WHEN t.troubled THEN 0 ELSE 1 END,
    ramp_next_at = CASE WHEN t.troubled THEN now() + m.ramp_every ELSE m.ramp_next_at + m.ramp_every END,
    updated_at   = now()
FROM (
    SELECT m2.id,
           m2.paused_until > m2.ramp_next_at - m2.ramp_every
           OR EXISTS (SELECT 1
                      FROM sends s
                      JOIN enrollments e ON e.id = s.enrollment_id
                      WHERE s.mailbox_id = m2.id
                        AND s.created_at > m2.ramp_next_at - m2.ramp_every - interval '7 days'
                        AND e.status = 'bounced'
                        AND e.updated_at > m2.ramp_next_at - m2.ramp_every) AS troubled
    FROM mailboxes m2
    WHERE m2.ramp_start > 0
      AND m2.status = 'active'
      AND m2.ramp_next_at <= now()
      AND m2.ramp_start + m2.ramp_step * m2.ramp_level < m2.ramp_max
    FOR UPDATE OF m2 SKIP LOCKED
) t
WHERE m.id = t.id
RETURNING m.id;
