-- OAuth2 mailboxes (issue 38). A mailbox's auth settings from the campaign
-- file (provider, endpoints, the names of the client id/secret variables;
-- never a secret) are kept as JSON beside its SMTP URL; NULL: password auth.
--
-- mailbox_oauth_tokens holds what `mailbox authorize` obtained: the refresh
-- token and the cached access token, both sealed with the master key
-- (AES-256-GCM, bound to the mailbox and the token's role, see
-- internal/secrets), and the access token's expiry. Ticks on every host
-- read the cached token and refresh it under this row's lock, so one token
-- request is made per mailbox per expiry. revoked_at marks an episode of
-- invalid_grant: the mailbox waits for a new authorization.

-- +goose Up
ALTER TABLE mailboxes ADD COLUMN auth jsonb;

CREATE TABLE mailbox_oauth_tokens (
    mailbox_id     bigint PRIMARY KEY REFERENCES mailboxes (id) ON DELETE CASCADE,
    refresh_sealed bytea NOT NULL,
    access_sealed  bytea,
    access_expiry  timestamptz,
    master_key_id  text NOT NULL,
    -- The number of refreshes made: a test and an operator see the rate.
    refreshes      bigint NOT NULL DEFAULT 0,
    revoked_at     timestamptz,
    authorized_at  timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown', 'credits_low', 'inbox_suspicious',
                        'mailbox_auth_revoked'));

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, UPDATE ON mailbox_oauth_tokens TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DELETE FROM events WHERE kind = 'mailbox_auth_revoked';
ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown', 'credits_low', 'inbox_suspicious'));
DROP TABLE mailbox_oauth_tokens;
ALTER TABLE mailboxes DROP COLUMN auth;
