-- Trust at the inbox (issue 25): a bounce counts only for a message we sent,
-- a poison message never blocks a mailbox, a mailbox that bounces too much
-- pauses itself.
--   * sends.bounced_at: when a hard bounce (an SMTP 5.1.x refusal, or a DSN
--     the inbox tick matched to this send) was recorded; the bounce-rate
--     guard counts these over the mailbox's last sends.
--   * mailboxes.verp / verp_secret: a mailbox that opts in sends each
--     message with its own return path, local+b.<ref>.<mac>@domain, whose
--     MAC (HMAC-SHA256 under verp_secret) the inbox tick checks before a
--     DSN sent there counts. The secret is made here, from the server's
--     strong random source, one per mailbox.
--   * campaigns.bounce_rate_max / bounce_streak_max: the guard's limits
--     (3% of the last 200 sends, 5 in a row; 0 turns one off).
--   * inbox_skipped: messages the inbox tick could not process, by UID; the
--     checkpoint moved past them.
--   * events: inbox_suspicious, raised once for a delivery report naming
--     more than a handful of addresses the mailbox never mailed.

-- +goose Up
ALTER TABLE sends ADD COLUMN bounced_at timestamptz;

ALTER TABLE mailboxes ADD COLUMN verp boolean NOT NULL DEFAULT false;
ALTER TABLE mailboxes ADD COLUMN verp_secret bytea NOT NULL
    DEFAULT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

ALTER TABLE campaigns ADD COLUMN bounce_rate_max numeric NOT NULL DEFAULT 0.03
    CHECK (bounce_rate_max >= 0 AND bounce_rate_max <= 1);
ALTER TABLE campaigns ADD COLUMN bounce_streak_max integer NOT NULL DEFAULT 5 CHECK (bounce_streak_max >= 0);

CREATE TABLE inbox_skipped (
    mailbox_id   bigint NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
    uid_validity bigint NOT NULL,
    uid          bigint NOT NULL,
    reason       text NOT NULL,
    tick_id      text NOT NULL,
    skipped_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (mailbox_id, uid_validity, uid)
);
CREATE INDEX inbox_skipped_recent_idx ON inbox_skipped (mailbox_id, skipped_at DESC);

ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown', 'credits_low', 'inbox_suspicious'));

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT, UPDATE ON inbox_skipped TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DELETE FROM events WHERE kind = 'inbox_suspicious';
ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown', 'credits_low'));
DROP TABLE inbox_skipped;
ALTER TABLE campaigns DROP COLUMN bounce_streak_max, DROP COLUMN bounce_rate_max;
ALTER TABLE mailboxes DROP COLUMN verp_secret, DROP COLUMN verp;
ALTER TABLE sends DROP COLUMN bounced_at;
