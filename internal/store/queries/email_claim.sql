-- Claims up to $1 due enrollments for tick $3 with a lease of $2, none on
-- the mailboxes in $4 (still busy with an earlier batch of this tick).
--
-- Fair: each active campaign offers its own oldest due rows (LATERAL, on
-- enrollments_campaign_claim_idx), and the batch takes them round-robin by
-- rank within the campaign, so a huge backlog cannot starve a small campaign.
-- Only mailboxes that are active, not paused and under their daily cap
-- (rolling 24 hours of sends) are served, and no mailbox gets more rows than
-- its remaining room. Leads without an email are not claimed: they are
-- blocked, not due. next_send_at becomes the lease end, so a crashed tick's
-- rows come back by themselves; due_at keeps the original due time.
WITH healthy AS (
    SELECT m.id,
           CASE WHEN m.daily_cap = 0 THEN 2147483647
                ELSE m.daily_cap - (SELECT count(*)
                                    FROM sends s
                                    WHERE s.mailbox_id = m.id
                                      AND s.status <> 'failed'
                                      AND s.created_at > now() - interval '24 hours')
           END AS room
    FROM mailboxes m
    WHERE m.status = 'active' AND (m.paused_until IS NULL OR m.paused_until <= now())
      AND m.id <> ALL ($4::bigint[])
),
candidates AS (
    SELECT d.id, d.campaign_id, d.mailbox_id, d.next_send_at
    FROM campaigns c
    CROSS JOIN LATERAL (
        SELECT e.id, e.campaign_id, e.mailbox_id, e.next_send_at
        FROM enrollments e
        WHERE e.campaign_id = c.id
          AND e.status = 'active'
          AND e.next_send_at <= now()
          AND e.mailbox_id = ANY (ARRAY(SELECT h.id FROM healthy h WHERE h.room > 0))
          AND EXISTS (SELECT 1 FROM leads l WHERE l.id = e.lead_id AND coalesce(l.email, '') <> '')
        ORDER BY e.next_send_at
        LIMIT $1
        FOR UPDATE OF e SKIP LOCKED
    ) d
    WHERE c.status = 'active'
),
ranked AS (
    SELECT cd.id, cd.next_send_at, h.room,
           row_number() OVER (PARTITION BY cd.campaign_id ORDER BY cd.next_send_at, cd.id) AS campaign_rank,
           row_number() OVER (PARTITION BY cd.mailbox_id ORDER BY cd.next_send_at, cd.id) AS mailbox_rank
    FROM candidates cd
    JOIN healthy h ON h.id = cd.mailbox_id
),
picked AS (
    SELECT id, next_send_at
    FROM ranked
    WHERE mailbox_rank <= room
    ORDER BY campaign_rank, next_send_at, id
    LIMIT $1
)
UPDATE enrollments e
SET next_send_at = now() + $2::interval,
    locked_until = now() + $2::interval,
    locked_by    = $3,
    updated_at   = now()
FROM picked p, leads l
WHERE e.id = p.id AND l.id = e.lead_id
RETURNING e.id, e.campaign_id, e.workspace_id, e.lead_id, e.mailbox_id, e.current_step, e.attempts, p.next_send_at,
          l.first_name, l.last_name, l.company, l.company_domain, lower(btrim(l.email)), coalesce(l.timezone, ''),
          ARRAY(SELECT s.message_id FROM sends s
                WHERE s.enrollment_id = e.id AND s.status = 'sent' AND s.step < e.current_step
                ORDER BY s.step) AS thread,
          (SELECT s.status FROM sends s
           WHERE s.enrollment_id = e.id AND s.step = e.current_step AND s.status <> 'failed') AS step_send,
          (SELECT sp.reason FROM suppressions sp
           WHERE sp.workspace_id = e.workspace_id AND sp.email = lower(btrim(l.email))) AS suppressed
