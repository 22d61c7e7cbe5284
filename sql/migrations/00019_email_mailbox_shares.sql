-- Mailbox shares (issue 30): concurrent email ticks each serve their own
-- share of the mailboxes first, so each mailbox's messages go through few
-- connections instead of one per tick process (at 16 processes over 1,000
-- mailboxes a connection carried 1.4 messages; every connection is a
-- greeting, EHLO and, on a real server, a TLS handshake and a login).
--   * tick_runs.claims_until: when a tick stops claiming (its start plus
--     --max-duration). A tick counts toward the shares until then or until
--     it finishes, so a killed tick's share waits at most that long before
--     the others take it back.
--   * tick_runs_open_idx: the unfinished runs, which the email claim counts
--     per claim; only running ticks (and killed ones until prune) are in it.

-- +goose Up
ALTER TABLE tick_runs ADD COLUMN claims_until timestamptz;

CREATE INDEX tick_runs_open_idx ON tick_runs (kind, tick_id) WHERE finished_at IS NULL;

-- +goose Down
DROP INDEX tick_runs_open_idx;
ALTER TABLE tick_runs DROP COLUMN claims_until;
