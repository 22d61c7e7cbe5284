-- Records sends as 'sending' before SMTP. The unique (enrollment, step) key
-- makes a step at-most-once: a step whose row is 'sending', 'sent' or
-- 'delivery_unknown' is not written, and that message is not sent again. A
-- 'failed' row (the server refused the message, so nothing was delivered)
-- is taken over by the retry.
--
-- One campaign mails one address once: at step 1 the lead's normalised
-- address (@emails, as the claim returned it) is claimed for the enrollment in
-- campaign_recipients, and a step whose address another enrollment of the
-- campaign holds is not written either (duplicate leads). @holders is the
-- address's holder as the claim read it (0: none). Follow-ups only look
-- (their enrollment claimed the address at step 1). Returns every input:
-- enrollment, written, and the enrollment holding the address when that is
-- another one (else 0).
--
-- No holder is looked up per row here: this statement stays prepared for a
-- whole tick, and a plan made while campaign_recipients was small (just
-- analyzed, say) scanned all of it for every row as the tick filled it.
-- The claim, planned per run, reads the holders; only a row whose address
-- another tick claimed since (the insert conflicts) is looked up.
WITH input AS (
    SELECT *
    FROM unnest(@enrollment_ids::bigint[], @steps::int[], @mailbox_ids::bigint[], @message_ids::text[], @campaign_ids::bigint[], @emails::text[], @holders::bigint[])
        AS u (enrollment_id, step, mailbox_id, message_id, campaign_id, email, seen_holder)
),
claimed AS (
    INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
    SELECT campaign_id, email, enrollment_id FROM input WHERE email <> '' AND step = 1 AND seen_holder = 0
    -- In key order: two ticks claiming the same addresses (duplicate
    -- leads) wait for each other in one direction only, never in a cycle.
    ORDER BY campaign_id, email
    ON CONFLICT (campaign_id, email) DO NOTHING
    RETURNING campaign_id, email, enrollment_id
),
holder AS (
    -- The address's holder: seen by the claim, or claimed by this
    -- statement (which does not see its own inserts, hence the join); a
    -- follow-up with no holder (sent before holders were recorded) holds
    -- it itself. Else another tick claimed it after the claim: its holder
    -- if committed before this statement, -1 if not (coalesce evaluates
    -- the lookup only for those rows).
    SELECT i.*, CASE WHEN i.email = '' THEN i.enrollment_id
                     WHEN i.seen_holder <> 0 THEN i.seen_holder
                     WHEN i.step > 1 THEN i.enrollment_id
                     ELSE coalesce(c.enrollment_id,
                                   (SELECT r.enrollment_id FROM campaign_recipients r
                                    WHERE r.campaign_id = i.campaign_id AND r.email = i.email),
                                   -1) END AS held_by
    FROM input i
    LEFT JOIN claimed c ON c.campaign_id = i.campaign_id AND c.email = i.email
),
written AS (
    INSERT INTO sends (enrollment_id, step, mailbox_id, message_id)
    SELECT enrollment_id, step, mailbox_id, message_id FROM holder WHERE held_by = enrollment_id
    ON CONFLICT (enrollment_id, step) DO UPDATE
    SET mailbox_id = EXCLUDED.mailbox_id,
        message_id = EXCLUDED.message_id,
        status     = 'sending',
        error      = NULL,
        sent_at    = NULL,
        created_at = now()
    WHERE sends.status = 'failed'
    RETURNING enrollment_id
)
SELECT h.enrollment_id,
       h.enrollment_id IN (SELECT enrollment_id FROM written),
       CASE WHEN h.held_by = h.enrollment_id THEN 0 ELSE h.held_by END
FROM holder h;
