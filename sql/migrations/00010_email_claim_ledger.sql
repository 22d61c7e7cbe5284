-- Caps charged at the claim (issue 23).
--
-- mailbox_cap_slots(mailbox, at): the slots of a mailbox's cap in force
-- taken at instant at, each with when it frees. One definition for the
-- claim (email_claim.sql), status and why, so they cannot disagree:
--   * its sends that are not 'failed' ('sending', 'sent',
--     'delivery_unknown'), each for 24 hours from the later of its
--     'sending' write (created_at) and its outcome (sent_at, set when the
--     server answered or the tick gave up waiting for it), so from after
--     the server had it; a row still 'sending' (on the wire, or left by a
--     crash until the next tick records it delivery_unknown) frees 24
--     hours after at;
--   * its enrollments leased to a tick (locked_until > at) whose step has
--     no such sends row yet: claimed, not yet sending, free 24 hours after
--     at.
-- A row released unsent loses its lease (its 'sending' row, if any,
-- becomes 'failed'), so its slot comes back; so does a crashed tick's when
-- its lease runs out. Rows are read from 48 hours back: a message goes out
-- within its tick's --max-duration of its 'sending' write. There is no
-- upper bound on created_at: a claim must count a 'sending' row committed
-- by a transaction that started after its own.
--
-- enrollments_leased_idx finds the leased rows without walking the
-- mailbox's active enrollments, and the rows a dead tick left leased (the
-- claim records those whose step it left 'sending'). It holds only leased
-- rows: the settle clears locked_until, and a claim's update already
-- writes a new entry in every index (next_send_at changes), so it adds one
-- small entry per claimed row and nothing per settled one.
--
-- NO TRANSACTION: the index is built CONCURRENTLY, a deploy must not block
-- running ticks; both statements are idempotent.

-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY IF NOT EXISTS enrollments_leased_idx
    ON enrollments (mailbox_id, locked_until) WHERE locked_until IS NOT NULL;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION mailbox_cap_slots(mailbox bigint, at timestamptz)
RETURNS TABLE (frees_at timestamptz, n bigint)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN s.status = 'sending' THEN at ELSE greatest(s.created_at, s.sent_at) END + interval '24 hours',
           count(*)
    FROM sends s
    WHERE s.mailbox_id = mailbox
      AND s.created_at > at - interval '48 hours'
      AND s.status <> 'failed'
      AND (s.status = 'sending' OR greatest(s.created_at, s.sent_at) > at - interval '24 hours')
    GROUP BY 1
    UNION ALL
    SELECT at + interval '24 hours', count(*)
    FROM enrollments e
    WHERE e.mailbox_id = mailbox
      AND e.locked_until > at
      AND NOT EXISTS (SELECT 1 FROM sends s
                      WHERE s.enrollment_id = e.id AND s.step = e.current_step AND s.status <> 'failed')
    HAVING count(*) > 0
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION IF EXISTS mailbox_cap_slots(bigint, timestamptz);
DROP INDEX CONCURRENTLY IF EXISTS enrollments_leased_idx;
