-- Claims up to @batch due enrollments for tick @tick_id with a lease of
-- @lease. It is the third statement of the claim's transaction: @locked are the mailboxes the
-- first (email_claim_lock.sql) locked, @served those the second
-- (email_claim_room.sql) found open with room, @rooms the room of each.
--
-- Fair: each active campaign offers its own oldest due rows (LATERAL), and
-- the batch takes them round-robin by rank within the campaign, so a huge
-- backlog cannot starve a small campaign. Due follow-ups are looked for
-- apart from first steps (their own LATERAL, on
-- enrollments_followup_claim_idx: the two differ only in the step
-- predicate, which must be literal for the partial index) and, where the
-- campaign says follow_ups_first, take a mailbox's room first, so a backlog
-- of new leads cannot break running threads.
--
-- The served mailboxes (@served) are a parameter, and the claim is planned
-- per run: where most mailboxes may be served it walks the claim index in due
-- order, reading about a row per row it claims; where only some may, the
-- store plans it with index scans off (planByMailbox), so it reads their
-- rows through the mailbox index and never the older rows of the paused or
-- full mailboxes (store.servedByMailbox).
--
-- Caps are charged here, at the claim: a mailbox gets at most its room
-- (@rooms, counted after its lock; see email_claim_room.sql). A mailbox with a
-- cap in force or a human gap is served only if this transaction holds
-- its row lock (@locked); one with neither needs no lock and is served as it
-- is, unless this statement sees it capped after all (its cap set since
-- the room was counted): then it waits for the next claim.
-- A mailbox with a gap gets one row per claim, only once its
-- next_send_not_before has passed, which then moves a random gap ahead.
-- Leads without an email are not claimed: they are blocked, not due
-- (has_address leaves their first steps out of the claim's index).
-- Besides the batch, it takes up to @batch rows a dead tick left 'sending'
-- (crashed, below) to record them.
-- @stopped_follow_ups is false but in the invariant harness's broken build
-- that takes the follow-ups of stopped enrollments (internal/faults,
-- Stops): planned per run, false folds away and the predicate is the
-- partial index's own.
-- next_send_at becomes the lease end, so a crashed tick's rows come back by
-- themselves; due_at keeps the original due time.
-- Rows are locked FOR NO KEY UPDATE: it keeps claims apart as FOR UPDATE
-- does, but not the foreign key checks of sends and campaign_recipients
-- (KEY SHARE on the enrollment). A claim keeps the lock of every row it
-- re-checked, claimed or not (another tick's row claimed since this
-- statement's snapshot), until it commits; FOR UPDATE held that tick's
-- 'sending' write until then.
WITH healthy AS (
    SELECT m.id, r.room
    FROM unnest(@served::bigint[], @rooms::bigint[]) AS r(id, room)
    JOIN mailboxes m ON m.id = r.id
    WHERE m.status = 'active' AND (m.paused_until IS NULL OR m.paused_until <= now())
      AND (m.cap_today = 0 AND m.gap_max = interval '0' OR m.id = ANY (@locked::bigint[]))
),
first_steps AS (
    SELECT d.id, d.campaign_id, d.mailbox_id, d.next_send_at, 1 AS priority
    FROM campaigns c
    CROSS JOIN LATERAL (
        SELECT e.id, e.campaign_id, e.mailbox_id, e.next_send_at
        FROM enrollments e
        WHERE e.campaign_id = c.id
          AND e.status = 'active'
          AND e.current_step = 1
          AND e.has_address
          AND e.next_send_at <= now()
          AND e.mailbox_id = ANY (@served::bigint[])
          AND EXISTS (SELECT 1 FROM leads l WHERE l.id = e.lead_id AND coalesce(l.email, '') <> '')
        ORDER BY e.next_send_at
        LIMIT @batch
        FOR NO KEY UPDATE OF e SKIP LOCKED
    ) d
    WHERE c.status = 'active'
),
follow_ups AS (
    SELECT d.id, d.campaign_id, d.mailbox_id, d.next_send_at, CASE WHEN c.follow_ups_first THEN 0 ELSE 1 END AS priority
    FROM campaigns c
    CROSS JOIN LATERAL (
        SELECT e.id, e.campaign_id, e.mailbox_id, e.next_send_at
        FROM enrollments e
        WHERE e.campaign_id = c.id
          AND (e.status = 'active' OR @stopped_follow_ups::boolean AND e.status IN ('replied', 'unsubscribed'))
          AND e.current_step > 1
          AND e.next_send_at <= now()
          AND e.mailbox_id = ANY (@served::bigint[])
          AND EXISTS (SELECT 1 FROM leads l WHERE l.id = e.lead_id AND coalesce(l.email, '') <> '')
        ORDER BY e.next_send_at
        LIMIT @batch
        FOR NO KEY UPDATE OF e SKIP LOCKED
    ) d
    WHERE c.status = 'active'
),
candidates AS (
    SELECT * FROM first_steps
    UNION ALL
    SELECT * FROM follow_ups
),
ranked AS (
    SELECT cd.id, cd.mailbox_id, cd.next_send_at, cd.priority, h.room,
           row_number() OVER (PARTITION BY cd.campaign_id ORDER BY cd.priority, cd.next_send_at, cd.id) AS campaign_rank,
           row_number() OVER (PARTITION BY cd.mailbox_id ORDER BY cd.priority, cd.next_send_at, cd.id) AS mailbox_rank
    FROM candidates cd
    JOIN healthy h ON h.id = cd.mailbox_id
),
picked AS (
    SELECT id, mailbox_id, next_send_at
    FROM ranked
    WHERE mailbox_rank <= room
    ORDER BY campaign_rank, priority, next_send_at, id
    LIMIT @batch
),
crashed AS (
    -- Rows whose tick died while their step was 'sending' (lease run out,
    -- never settled): taken whatever their mailbox's room, pause or gap
    -- and whatever their status (a reply may have come meanwhile), since
    -- the tick only records them delivery_unknown and sends nothing; a
    -- full or paused mailbox would otherwise leave them 'sending' for a
    -- day or for good. enrollments_leased_idx holds them.
    SELECT e.id, e.mailbox_id, e.next_send_at
    FROM enrollments e
    WHERE e.locked_until IS NOT NULL AND e.locked_until <= now()
      AND EXISTS (SELECT 1 FROM sends s
                  WHERE s.enrollment_id = e.id AND s.step = e.current_step AND s.status = 'sending')
    ORDER BY e.locked_until
    LIMIT @batch
    FOR NO KEY UPDATE OF e SKIP LOCKED
),
claimed AS (
    SELECT id, mailbox_id, next_send_at FROM picked
    UNION
    SELECT id, mailbox_id, next_send_at FROM crashed
),
spaced AS (
    -- The gap starts at the claim: the tick sends right away.
    UPDATE mailboxes m
    SET next_send_not_before = now() + m.gap_min + random() * (m.gap_max - m.gap_min)
    WHERE m.gap_max > interval '0' AND m.id IN (SELECT p.mailbox_id FROM picked p)
)
UPDATE enrollments e
SET next_send_at = now() + @lease::interval,
    locked_until = now() + @lease::interval,
    locked_by    = @tick_id,
    updated_at   = now()
FROM claimed p, leads l
WHERE e.id = p.id AND l.id = e.lead_id
-- Each column is named as the field of store.ClaimedEnrollment it is
-- scanned into (by name: pgx.RowToStructByName); what may be NULL comes
-- back as the field's zero value.
RETURNING e.id, e.campaign_id, e.workspace_id, e.lead_id, e.mailbox_id, e.current_step, e.attempts, p.next_send_at AS due_at,
          l.first_name, l.last_name, l.company, l.company_domain, l.email, coalesce(l.timezone, '') AS timezone,
          -- A first step has no thread: no lookup.
          CASE WHEN e.current_step > 1
               THEN ARRAY(SELECT s.message_id FROM sends s
                          WHERE s.enrollment_id = e.id AND s.status = 'sent' AND s.step < e.current_step
                          ORDER BY s.step)
               ELSE '{}' END AS thread,
          coalesce((SELECT s.status FROM sends s
                    WHERE s.enrollment_id = e.id AND s.step = e.current_step AND s.status <> 'failed'), '') AS step_send,
          -- By the address's hash, so a forgotten person's row (no
          -- address, only its hash) suppresses too; an address's own row,
          -- with its reason, before a forgotten one.
          coalesce((SELECT sp.reason FROM suppressions sp
                    WHERE sp.workspace_id = e.workspace_id AND sp.email_sha256 = address_sha256(l.email)
                    ORDER BY sp.email IS NULL LIMIT 1), '') AS suppressed,
          -- The address's holder in the campaign, looked up here (planned
          -- per claim) so that the 'sending' statement, cached for the
          -- whole tick, need not look it up per row.
          coalesce((SELECT r.enrollment_id FROM campaign_recipients r
                    WHERE r.campaign_id = e.campaign_id AND r.email = l.email), 0) AS holder;
