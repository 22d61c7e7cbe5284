-- Records sends as 'sending' before SMTP. The unique (enrollment, step) key
-- makes a step at-most-once: a step whose row is 'sending', 'sent' or
-- 'delivery_unknown' is not written, and that message is not sent again. A
-- 'failed' row (the server refused the message, so nothing was delivered)
-- is taken over by the retry.
--
-- One campaign mails one address once: at step 1 the lead's normalised
-- address ($6, as the claim returned it) is claimed for the enrollment in
-- campaign_recipients, and a step whose address another enrollment of the
-- campaign holds is not written either (duplicate leads). Follow-ups only
-- look (their enrollment claimed the address at step 1): the claim costs an
-- insert, the look an index probe. Returns every input: enrollment, written, and the
-- enrollment holding the address when that is another one (else 0).
WITH input AS (
    SELECT *
    FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::text[], $5::bigint[], $6::text[])
        AS u (enrollment_id, step, mailbox_id, message_id, campaign_id, email)
),
claimed AS (
    INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
    SELECT campaign_id, email, enrollment_id FROM input WHERE email <> '' AND step = 1
    ON CONFLICT (campaign_id, email) DO NOTHING
    RETURNING campaign_id, email, enrollment_id
),
holder AS (
    -- The address's holder: committed before this statement, or claimed
    -- by it (a statement does not see its own inserts); a follow-up with
    -- no holder (sent before holders were recorded) holds it itself. -1: a
    -- concurrent tick claimed it after this statement started. The
    -- committed holder is looked up per row on the primary key: joined, the
    -- table (never analyzed while young) was scanned whole per group.
    SELECT i.*, CASE WHEN i.email = '' THEN i.enrollment_id
                     WHEN i.step > 1 THEN coalesce(i.committed_holder, i.enrollment_id)
                     ELSE coalesce(i.committed_holder, c.enrollment_id, -1) END AS held_by
    FROM (SELECT ip.*, (SELECT r.enrollment_id FROM campaign_recipients r
                        WHERE r.campaign_id = ip.campaign_id AND r.email = ip.email) AS committed_holder
          FROM input ip) i
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
