-- name: EmailClaimRoom :one
-- The second statement of the email claim's transaction: the mailboxes the
-- claim may serve and the room of each. A new statement after
-- email_claim_lock.sql, so its snapshot sees every claim committed on the
-- mailboxes it locked ($locked), and none can commit on them until this
-- transaction does: the room counted here stays true for the claim that
-- follows (time and failed sends only free slots).
--
-- Open: active, not paused, not busy in this tick ($busy), and either with
-- neither cap nor gap (no lock needed) or locked here (a gap only once its
-- turn has come). A mailbox with a cap in force (cap_today: the daily cap
-- lowered by a warm-up ramp) gets at most the cap less the slots
-- mailbox_cap_slots counts as taken (its sends of the last 24 hours, and
-- its rows leased to ticks that have no sends row yet; migration 00010); a
-- mailbox with a gap one row per claim.
--
-- The bounce guard's in_a_row limit is charged here too (issue 39): the
-- mailbox's sends in flight in other ticks (rows leased to them: claimed,
-- or on the wire, not yet settled) count as possible hard bounces beside
-- its newest hard bounces in a row, and a mailbox whose count reaches its
-- limit (the strictest of its campaigns, as email_mailbox_bounces.sql; none
-- for a mailbox no campaign lists, which the settle's guard still checks)
-- is not served. This tick's own rows in flight are not counted: its lanes
-- release a mailbox's queue once the guard pauses it, and counting them
-- would stop the tick claiming its next batch while the last one settles.
-- So no more than the limit go out beyond one tick's rows in flight. Per
-- mailbox: the limit from one grouped join, other ticks' leased rows on
-- enrollments_leased_idx, and only where there are some (a mailbox served
-- by one tick, the usual case with shares, reads nothing more) its newest
-- sends backwards on sends_mailbox_created_idx; at most the limit's rows
-- each. Without other ticks' rows in flight the streak is under the limit,
-- or the guard, run after the settle that made it, has paused the mailbox.
--
-- Of one part of the mailboxes, as email_claim_lock.sql: this tick's
-- share ($own) or the rest ($share: store.shareMask).
--
-- A statement of its own so that the claim gets the served mailboxes as a
-- parameter, and the store can choose how the claim finds their rows by
-- how many they are of the part's active mailboxes (active): see
-- store.ClaimEnrollments.
WITH open_mailboxes AS (
    SELECT m.id, m.cap_today, m.gap_max > interval '0' AS spaced
    FROM mailboxes m
    WHERE m.status = 'active' AND (m.paused_until IS NULL OR m.paused_until <= now())
      AND m.id <> ALL (sqlc.arg(busy)::bigint[])
      AND (get_bit(sqlc.arg(share)::bytea, (m.id % (8 * length(sqlc.arg(share)::bytea)))::int) = 1) = sqlc.arg(own)::bool
      AND (m.cap_today = 0 AND m.gap_max = interval '0'
           OR m.id = ANY (sqlc.arg(locked)::bigint[]) AND (m.gap_max = interval '0' OR m.next_send_not_before <= now()))
),
streak_limits AS (
    SELECT cm.mailbox_id AS id,
           coalesce(min(c.bounce_streak_max) FILTER (WHERE c.bounce_streak_max > 0), 0)::int AS streak_max
    FROM campaign_mailboxes cm
    JOIN campaigns c ON c.id = cm.campaign_id
    WHERE cm.mailbox_id IN (SELECT o.id FROM open_mailboxes o)
    GROUP BY cm.mailbox_id
),
limited AS (
    SELECT o.id, o.cap_today, o.spaced, coalesce(l.streak_max, 0) AS streak_max,
           CASE WHEN coalesce(l.streak_max, 0) = 0 THEN 0
                ELSE (SELECT count(*) FROM (SELECT 1 FROM enrollments e
                                            WHERE e.mailbox_id = o.id AND e.locked_until > now()
                                              AND coalesce(e.locked_by, '') <> sqlc.arg(tick_id)::text
                                            LIMIT l.streak_max) f)
           END AS others
    FROM open_mailboxes o
    LEFT JOIN streak_limits l ON l.id = o.id
),
healthy AS (
    SELECT o.id,
           least(CASE WHEN o.spaced THEN 1 ELSE 2147483647 END,
                 CASE WHEN o.cap_today = 0 THEN 2147483647
                      ELSE o.cap_today - (SELECT coalesce(sum(c.n), 0) FROM mailbox_cap_slots(o.id, now()) c)
                 END,
                 CASE WHEN o.streak_max = 0 OR o.others = 0 THEN 2147483647
                      WHEN o.streak_max - o.others
                           - (SELECT coalesce(min(r.n) FILTER (WHERE NOT r.bounced) - 1, count(*))
                              FROM (SELECT b.bounced, row_number() OVER (ORDER BY b.created_at DESC, b.id DESC) AS n
                                    FROM (SELECT s.id, s.created_at, (s.bounced_at IS NOT NULL) AS bounced
                                          FROM sends s
                                          WHERE s.mailbox_id = o.id
                                            AND (s.status IN ('sent', 'delivery_unknown') OR s.bounced_at IS NOT NULL)
                                          ORDER BY s.created_at DESC, s.id DESC
                                          LIMIT o.streak_max) b) r) > 0 THEN 2147483647
                      ELSE 0
                 END)::bigint AS room
    FROM limited o
)
SELECT ARRAY(SELECT h.id FROM healthy h WHERE h.room > 0 ORDER BY h.id)::bigint[] AS ids,
       ARRAY(SELECT h.room FROM healthy h WHERE h.room > 0 ORDER BY h.id)::bigint[] AS rooms,
       (SELECT count(*) FROM mailboxes m
        WHERE m.status = 'active'
          AND (get_bit(sqlc.arg(share)::bytea, (m.id % (8 * length(sqlc.arg(share)::bytea)))::int) = 1) = sqlc.arg(own)::bool)::int AS active;
