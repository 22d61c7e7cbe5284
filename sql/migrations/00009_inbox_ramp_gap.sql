-- Sending like operators' tools do (issue 18): inbox reading, warm-up ramps,
-- follow-ups before new starts, human gaps between a mailbox's sends.
--
-- NO TRANSACTION because the follow-up claim index is built CONCURRENTLY (a
-- deploy must not block running ticks); every statement is idempotent, so a
-- migration cut short can simply run again.

-- +goose NO TRANSACTION
-- +goose Up
-- imap_url: imaps://user@host[:993] or imap://host[:143] (STARTTLS; plain
-- only on loopback), read by `rindactl inbox tick`; NULL: no inbox reading.
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS imap_url text;

-- Warm-up ramp: the cap is ramp_start + ramp_step * ramp_level, at most
-- ramp_max; ramp_level grows by one each ramp_every (at ramp_next_at) unless
-- the mailbox bounced or was paused in that period. ramp_start 0: no ramp.
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS ramp_start integer NOT NULL DEFAULT 0 CHECK (ramp_start >= 0);
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS ramp_step integer NOT NULL DEFAULT 0 CHECK (ramp_step >= 0);
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS ramp_every interval NOT NULL DEFAULT '0' CHECK (ramp_every >= interval '0');
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS ramp_max integer NOT NULL DEFAULT 0 CHECK (ramp_max >= 0);
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS ramp_level integer NOT NULL DEFAULT 0 CHECK (ramp_level >= 0);
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS ramp_next_at timestamptz;
-- The cap in force (0 = none): the daily cap, lowered by the ramp. Stored
-- so the claim and status read one column and cannot disagree.
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS cap_today integer GENERATED ALWAYS AS (
    CASE
        WHEN ramp_start = 0 THEN daily_cap
        WHEN daily_cap = 0 THEN least(ramp_max, ramp_start + ramp_step * ramp_level)
        ELSE least(daily_cap, ramp_max, ramp_start + ramp_step * ramp_level)
    END) STORED;

-- Human gaps: after a claim, the mailbox gets its next row no sooner than a
-- random gap in [gap_min, gap_max] later, whichever tick or host asks.
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS gap_min interval NOT NULL DEFAULT '0';
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS gap_max interval NOT NULL DEFAULT '0';
ALTER TABLE mailboxes ADD COLUMN IF NOT EXISTS next_send_not_before timestamptz NOT NULL DEFAULT '-infinity';

-- When a mailbox's cap cannot cover all that is due, due follow-ups go first.
ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS follow_ups_first boolean NOT NULL DEFAULT true;

-- Where `inbox tick` left off in each mailbox's INBOX: messages up to
-- last_uid under uid_validity are done. A lease keeps two ticks apart.
CREATE TABLE IF NOT EXISTS inbox_checkpoints (
    mailbox_id   bigint PRIMARY KEY REFERENCES mailboxes (id) ON DELETE CASCADE,
    uid_validity bigint NOT NULL DEFAULT 0,
    last_uid     bigint NOT NULL DEFAULT 0,
    checked_at   timestamptz,
    last_error   text,
    locked_until timestamptz,
    locked_by    text
);

ALTER TABLE tick_runs DROP CONSTRAINT IF EXISTS tick_runs_kind_check;
ALTER TABLE tick_runs ADD CONSTRAINT tick_runs_kind_check CHECK (kind IN ('enrich', 'email', 'events', 'inbox'));

-- The claim looks for due follow-ups apart from first steps, so a backlog of
-- new leads cannot hide them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS enrollments_followup_claim_idx
    ON enrollments (campaign_id, next_send_at) WHERE status = 'active' AND current_step > 1;

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT UPDATE (ramp_level, ramp_next_at, next_send_not_before) ON mailboxes TO rindactl_tick;
        GRANT SELECT, INSERT, UPDATE ON inbox_checkpoints TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS enrollments_followup_claim_idx;
ALTER TABLE tick_runs DROP CONSTRAINT IF EXISTS tick_runs_kind_check;
ALTER TABLE tick_runs ADD CONSTRAINT tick_runs_kind_check CHECK (kind IN ('enrich', 'email', 'events'));
DROP TABLE IF EXISTS inbox_checkpoints;
ALTER TABLE campaigns DROP COLUMN IF EXISTS follow_ups_first;
ALTER TABLE mailboxes
    DROP COLUMN IF EXISTS next_send_not_before, DROP COLUMN IF EXISTS gap_max, DROP COLUMN IF EXISTS gap_min,
    DROP COLUMN IF EXISTS cap_today, DROP COLUMN IF EXISTS ramp_next_at, DROP COLUMN IF EXISTS ramp_level,
    DROP COLUMN IF EXISTS ramp_max, DROP COLUMN IF EXISTS ramp_every, DROP COLUMN IF EXISTS ramp_step,
    DROP COLUMN IF EXISTS ramp_start, DROP COLUMN IF EXISTS imap_url;
