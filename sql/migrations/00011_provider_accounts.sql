-- Enrichment that never parks what a short wait would serve, never pays
-- twice, and warns before credits run out (issue 24).

-- +goose Up
-- A breaker opened by throttling remembers the Retry-After that set its
-- window, so a lead waiting for it can say so ("findymail throttled until
-- 14:32, Retry-After 120 s"). NULL: none was given (quota, auth, operator).
ALTER TABLE breakers ADD COLUMN retry_after interval;

-- What providers already answered for a lead, so no answer is bought twice:
--   found_email, found_by  an address a finder found (and billed) that the
--                          verifier has not judged yet ("verify pending");
--                          the next attempt only verifies it
--   missed_by              finders that answered without a usable address;
--                          the waterfall does not ask them again
-- `rindactl requeue --refind` clears all three (the operator asks to pay
-- again). Constant defaults: no table rewrite.
ALTER TABLE lead_enrichment
    ADD COLUMN found_email text,
    ADD COLUMN found_by text,
    ADD COLUMN missed_by text[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT lead_enrichment_found_check CHECK ((found_email IS NULL) = (found_by IS NULL));

-- A provider account's credits as its account endpoint last reported them,
-- read at most once per RINDA_CREDITS_REFRESH by whichever process claims
-- the row first (refreshing_until), and shared by all. account is the
-- token-bucket key: 'hunter' for the host's key, 'hunter/ws/12' for
-- workspace 12's own key. low and episode make credits_low one alert per
-- episode: the episode starts when the runway falls under the threshold
-- and ends when it is back above it.
CREATE TABLE provider_credits (
    account          text PRIMARY KEY,
    provider         text NOT NULL,
    workspace_id     bigint REFERENCES workspaces (id) ON DELETE CASCADE,
    credits          bigint,
    reset_at         timestamptz,
    read_at          timestamptz,
    read_error       text,
    refreshing_until timestamptz,
    low              boolean NOT NULL DEFAULT false,
    episode          bigint NOT NULL DEFAULT 0,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown', 'credits_low'));

-- A workspace's own API key per provider, sealed with AES-256-GCM under the
-- master key (RINDA_SECRET_KEY); master_key_id names that key (a hash
-- prefix, not the key) so a wrong one is reported before any decryption.
-- The ciphertext is bound to its workspace and provider: a row copied to
-- another workspace does not open.
CREATE TABLE workspace_provider_keys (
    workspace_id  bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    provider      text NOT NULL,
    ciphertext    bytea NOT NULL,
    master_key_id text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, provider)
);

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT, UPDATE ON provider_credits TO rindactl_tick;
        GRANT SELECT ON workspace_provider_keys TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE workspace_provider_keys;
DELETE FROM events WHERE kind = 'credits_low';
ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown'));
DROP TABLE provider_credits;
ALTER TABLE lead_enrichment
    DROP CONSTRAINT lead_enrichment_found_check,
    DROP COLUMN missed_by, DROP COLUMN found_by, DROP COLUMN found_email;
ALTER TABLE breakers DROP COLUMN retry_after;
