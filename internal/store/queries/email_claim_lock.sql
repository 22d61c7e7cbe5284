-- name: EmailClaimLock :one
-- The first statement of the email claim's transaction: locks the mailboxes
-- whose room the claim must count (a cap in force, or a human gap whose
-- turn has come), in id order, skipping those another transaction holds.
-- The claim that follows is a new statement, so its snapshot is taken after
-- these locks: it sees every claim committed on these mailboxes before it,
-- and none can commit on them until it does. That is what makes the cap
-- hold whatever the number of ticks and hosts (docs/email.md, "Daily cap").
-- FOR NO KEY UPDATE: the sends and enrollments foreign keys take KEY SHARE
-- on the mailbox row, which this does not block.
-- eligible counts the mailboxes that wanted a lock: more than were locked
-- means another claim held some (the tick may try again shortly).
-- It locks one part of the mailboxes: this tick's share ($own: the bit of
-- the mailbox's slot, id modulo the bits in $share, is set there) or the
-- rest, so concurrent claims lock disjoint shares (store.ClaimEnrollments).
WITH eligible AS (
    SELECT m.id
    FROM mailboxes m
    WHERE m.status = 'active' AND (m.paused_until IS NULL OR m.paused_until <= now())
      AND m.id <> ALL (sqlc.arg(busy)::bigint[])
      AND (m.cap_today > 0 OR m.gap_max > interval '0' AND m.next_send_not_before <= now())
      AND (get_bit(sqlc.arg(share)::bytea, (m.id % (8 * length(sqlc.arg(share)::bytea)))::int) = 1) = sqlc.arg(own)::bool
),
locked AS (
    SELECT m.id
    FROM mailboxes m
    WHERE m.id IN (SELECT e.id FROM eligible e)
    ORDER BY m.id
    FOR NO KEY UPDATE OF m SKIP LOCKED
)
SELECT ARRAY(SELECT l.id FROM locked l)::bigint[] AS locked,
       (SELECT count(*) FROM eligible)::int AS eligible;
