-- Caps charged at the claim (issue 23): a mailbox's room is its cap in force
-- less its sends in the last 24 hours AND the rows leased to ticks that have
-- no sends row yet (claimed, not yet sending). The claim counts those per
-- mailbox under the mailbox's row lock; this index finds them without
-- walking the mailbox's active enrollments. It holds only leased rows: the
-- settle clears locked_until, and a claim's update already writes a new
-- index entry for every index (next_send_at changes), so it adds one small
-- entry per claimed row and nothing per settled one.
--
-- NO TRANSACTION: built CONCURRENTLY, a deploy must not block running ticks.

-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY IF NOT EXISTS enrollments_leased_idx
    ON enrollments (mailbox_id) WHERE locked_until IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS enrollments_leased_idx;
