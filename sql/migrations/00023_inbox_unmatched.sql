-- Proof at the inbox (issue 37): a delivery report counts only when it
-- proves it answers our message (a VERP return path whose MAC verifies, or
-- a Message-ID we sent to the recipient it names). Every other report is
-- recorded here, by UID, instead of ending anything: `inbox tick` and
-- `rindactl why mailbox` show them; they count toward no bounce rate.

-- +goose Up
CREATE TABLE inbox_unmatched (
    mailbox_id   bigint NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
    uid_validity bigint NOT NULL,
    uid          bigint NOT NULL,
    reason       text NOT NULL,
    tick_id      text NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (mailbox_id, uid_validity, uid)
);
CREATE INDEX inbox_unmatched_recent_idx ON inbox_unmatched (mailbox_id, recorded_at DESC);

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT, UPDATE ON inbox_unmatched TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE inbox_unmatched;
