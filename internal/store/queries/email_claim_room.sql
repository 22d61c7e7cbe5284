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
healthy AS (
    SELECT o.id,
           least(CASE WHEN o.spaced THEN 1 ELSE 2147483647 END,
                 CASE WHEN o.cap_today = 0 THEN 2147483647
                      ELSE o.cap_today - (SELECT coalesce(sum(c.n), 0) FROM mailbox_cap_slots(o.id, now()) c)
                 END)::bigint AS room
    FROM open_mailboxes o
)
SELECT ARRAY(SELECT h.id FROM healthy h WHERE h.room > 0 ORDER BY h.id)::bigint[] AS ids,
       ARRAY(SELECT h.room FROM healthy h WHERE h.room > 0 ORDER BY h.id)::bigint[] AS rooms,
       (SELECT count(*) FROM mailboxes m
        WHERE m.status = 'active'
          AND (get_bit(sqlc.arg(share)::bytea, (m.id % (8 * length(sqlc.arg(share)::bytea)))::int) = 1) = sqlc.arg(own)::bool)::int AS active;
