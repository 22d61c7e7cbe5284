-- Settles a group of tick outcomes in one statement (one round trip, atomic
-- without an explicit transaction), for tick @tick_id:
--   sends:       'sending' rows become 'sent', 'failed' when the server
--                refused the message (a failed row means: not delivered), or
--                'delivery_unknown' (with a delivery_unknown event); each
--                adds its metric (@send_metrics) to its mailbox's running totals,
--                locked in mailbox order; a hard bounce (@send_bounced) gets
--                bounced_at, which the bounce-rate guard counts;
--   enrollments: outcomes applied to the rows the tick still holds, which are
--                released; a mailbox of 0 keeps the current one (it may have
--                been rebound);
--   suppressions: addresses that must not be mailed again.
WITH finished AS (
    UPDATE sends s
    SET status = u.status, sent_at = u.sent_at, error = NULLIF(u.error, ''),
        bounced_at = CASE WHEN u.bounced THEN now() ELSE s.bounced_at END
    FROM unnest(@send_enrollment_ids::bigint[], @send_steps::int[], @send_statuses::text[], @send_sent_at::timestamptz[], @send_errors::text[], @send_metrics::text[], @send_bounced::boolean[])
        AS u (enrollment_id, step, status, sent_at, error, metric, bounced)
    -- On the key (@send_enrollment_ids) as well as by the join: a plan cached while sends
    -- was small walks sends first, and with this it reads only the
    -- group's rows (without it, all of sends' index, once per group).
    WHERE s.enrollment_id = ANY (@send_enrollment_ids::bigint[]) AND s.enrollment_id = u.enrollment_id AND s.step = u.step AND s.status = 'sending'
    RETURNING s.enrollment_id, s.step, s.mailbox_id, s.message_id, s.status, s.error, u.metric
),
metrics AS (
    SELECT mailbox_id, metric FROM finished WHERE mailbox_id IS NOT NULL AND metric <> ''
),
totals AS (
    INSERT INTO email_mailbox_totals AS t (mailbox_id, sent, failed, deferred, delivery_unknown)
    SELECT mailbox_id,
           count(*) FILTER (WHERE metric = 'sent'),
           count(*) FILTER (WHERE metric = 'failed'),
           count(*) FILTER (WHERE metric = 'deferred'),
           count(*) FILTER (WHERE metric = 'delivery_unknown')
    FROM metrics
    GROUP BY mailbox_id
    -- Rows are locked in this order: in mailbox order, two ticks settling
    -- over the same mailboxes never each hold a row the other waits for
    -- (a hash aggregate's order deadlocked four ticks at once).
    ORDER BY mailbox_id
    ON CONFLICT (mailbox_id) DO UPDATE
    SET sent             = t.sent + EXCLUDED.sent,
        failed           = t.failed + EXCLUDED.failed,
        deferred         = t.deferred + EXCLUDED.deferred,
        delivery_unknown = t.delivery_unknown + EXCLUDED.delivery_unknown,
        updated_at       = now()
    RETURNING 1
),
unknown_events AS (
    INSERT INTO events (kind, workspace_id, mailbox_id, dedupe_key, payload)
    SELECT 'delivery_unknown', e.workspace_id, f.mailbox_id,
           'delivery_unknown:' || f.enrollment_id || ':' || f.step || ':' || f.message_id,
           jsonb_build_object('enrollment_id', f.enrollment_id, 'step', f.step, 'message_id', f.message_id,
                              'address', mb.address, 'reason', f.error, 'tick_id', @tick_id::text)
    FROM finished f
    JOIN enrollments e ON e.id = f.enrollment_id
    LEFT JOIN mailboxes mb ON mb.id = f.mailbox_id
    WHERE f.status = 'delivery_unknown'
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING 1
),
settled AS (
    UPDATE enrollments e
    -- A reply or unsubscribe recorded while this tick held the row
    -- (rindactl enrollment mark) wins: the row keeps that status.
    SET status       = CASE WHEN e.status = 'active' THEN u.status ELSE e.status END,
        current_step = u.current_step,
        next_send_at = u.next_send_at,
        mailbox_id   = coalesce(NULLIF(u.mailbox_id, 0), e.mailbox_id),
        attempts     = u.attempts,
        last_error   = NULLIF(u.last_error, ''),
        locked_until = NULL,
        locked_by    = NULL,
        updated_at   = now()
    -- The rows are found on the key (@enrollment_ids) and matched to their outcomes by a
    -- hash: locked_by = @tick_id is a join clause (u.tick, OFFSET 0 keeps it one),
    -- since as a filter on enrollments, whose statistics see no locked row,
    -- it made the planner expect one row and scan the table, or rescan the
    -- outcomes, once per row.
    FROM (SELECT *, @tick_id::text AS tick
          FROM unnest(@enrollment_ids::bigint[], @enrollment_statuses::text[], @enrollment_steps::int[], @enrollment_next_send_at::timestamptz[], @enrollment_mailbox_ids::bigint[], @enrollment_attempts::int[], @enrollment_errors::text[])
              AS u (id, status, current_step, next_send_at, mailbox_id, attempts, last_error)
          OFFSET 0) u
    WHERE e.id = ANY (@enrollment_ids::bigint[]) AND e.id = u.id AND e.locked_by = u.tick
    RETURNING 1
),
suppressed AS (
    INSERT INTO suppressions (workspace_id, email, reason)
    SELECT u.workspace_id, u.email, u.reason
    FROM unnest(@suppression_workspaces::bigint[], @suppression_emails::text[], @suppression_reasons::text[]) AS u (workspace_id, email, reason)
    -- A person forgotten (lead forget) keeps only a hash-only row: a bounce
    -- of a send in flight then must not write the address back.
    WHERE NOT EXISTS (SELECT 1 FROM suppressions f
                      WHERE f.workspace_id = u.workspace_id AND f.email IS NULL AND f.email_sha256 = address_sha256(u.email))
    ORDER BY 1, 2 -- in key order, as the totals: no two ticks wait on each other
    ON CONFLICT (workspace_id, email) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM finished), (SELECT count(*) FROM settled), (SELECT count(*) FROM suppressed),
       (SELECT count(*) FROM totals), (SELECT count(*) FROM unknown_events);
