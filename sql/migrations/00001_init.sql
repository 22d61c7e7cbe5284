-- Schema v1 for the whole domain. Conventions:
--   * Tables that ticks claim from (lead_enrichment, enrollments) are narrow
--     and use fillfactor 70 so claim/complete updates stay HOT; wide profile
--     data lives in leads.
--   * Every claimable row has exactly one "due" clock that the partial claim
--     index covers; every state transition moves it forward.
--   * Status columns are text with CHECK constraints, so an unknown status is
--     rejected by the database itself.

-- +goose Up
CREATE TABLE workspaces (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
    -- NULL means no ceiling.
    monthly_usd_ceiling numeric(12, 2) CHECK (monthly_usd_ceiling >= 0),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE leads (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id   bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    external_id    text,
    first_name     text NOT NULL DEFAULT '',
    last_name      text NOT NULL DEFAULT '',
    company        text NOT NULL DEFAULT '',
    company_domain text NOT NULL DEFAULT '',
    email          text,
    -- 'import' or the provider that found the address.
    email_source   text,
    timezone       text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, external_id)
);

-- Enrichment state, one row per lead that needed enrichment.
-- next_attempt_at is the single due clock:
--   pending      -> when the next attempt may run (backoff / Retry-After)
--   in_progress  -> locked_until (a crashed tick's lease running out)
--   unreachable  -> negative_cache_until (the memo's natural recovery)
--   terminal     -> irrelevant (never claimed)
CREATE TABLE lead_enrichment (
    lead_id              bigint PRIMARY KEY REFERENCES leads (id) ON DELETE CASCADE,
    workspace_id         bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    status               text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'in_progress', 'enriched', 'not_found', 'unreachable', 'enrichment_failed')),
    attempts             integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at      timestamptz NOT NULL DEFAULT now(),
    locked_until         timestamptz,
    locked_by            text,
    negative_cache_until timestamptz,
    last_error           text,
    -- The provider that answered last (found the address, or blocked).
    provider             text,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK (status <> 'in_progress' OR (locked_until IS NOT NULL AND locked_by IS NOT NULL)),
    CHECK (status <> 'unreachable' OR negative_cache_until IS NOT NULL)
) WITH (fillfactor = 70);

-- The claim index: only claimable rows, ordered by their due clock.
CREATE INDEX lead_enrichment_claim_idx ON lead_enrichment (next_attempt_at)
    WHERE status IN ('pending', 'in_progress', 'unreachable');
CREATE INDEX lead_enrichment_workspace_status_idx ON lead_enrichment (workspace_id, status);

-- Ledger of provider calls: reserved before the call, settled or refunded
-- after. Spend = reserved + settled in the current month.
CREATE TABLE provider_calls (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    lead_id      bigint REFERENCES leads (id) ON DELETE SET NULL,
    provider     text NOT NULL,
    state        text NOT NULL DEFAULT 'reserved' CHECK (state IN ('reserved', 'settled', 'refunded')),
    cost_usd     numeric(12, 6) NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
    -- found, not_found, quota_exhausted, rate_limited, ...
    outcome      text,
    tick_id      text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    settled_at   timestamptz
);
CREATE INDEX provider_calls_workspace_month_idx ON provider_calls (workspace_id, created_at);

-- Circuit breaker per (workspace, provider).
CREATE TABLE breakers (
    workspace_id         bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    provider             text NOT NULL,
    state                text NOT NULL DEFAULT 'closed' CHECK (state IN ('closed', 'open', 'half_open')),
    open_until           timestamptz,
    reason               text,
    consecutive_failures integer NOT NULL DEFAULT 0,
    -- The single caller allowed through after open_until (half-open probe).
    probe_owner          text,
    probe_until          timestamptz,
    opened_at            timestamptz,
    -- Counts opens, so each episode gets exactly one alert.
    episode              bigint NOT NULL DEFAULT 0,
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, provider),
    CHECK (state = 'closed' OR open_until IS NOT NULL)
);

-- Token buckets kept as GCRA theoretical arrival times, one row per key
-- ('findymail', or 'findymail/ws/12' for per-workspace limits).
CREATE TABLE rate_limits (
    key        text PRIMARY KEY,
    tat        timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE campaigns (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name            text NOT NULL CHECK (name <> ''),
    -- Sending window; NULL window_start means any time.
    window_timezone text,   -- 'lead' or an IANA zone
    window_days     text[], -- mon..sun
    window_start    time,
    window_end      time,
    unsubscribe_url text,
    status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'archived')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name)
);

CREATE TABLE sequence_steps (
    campaign_id   bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    step          integer NOT NULL CHECK (step >= 1),
    delay_seconds bigint NOT NULL DEFAULT 0 CHECK (delay_seconds >= 0),
    subject       text,
    body          text NOT NULL,
    PRIMARY KEY (campaign_id, step)
);

CREATE TABLE mailboxes (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    address      text NOT NULL CHECK (address LIKE '%_@_%'),
    -- smtp:// or smtps:// URL without a password; the password is read from
    -- the environment variable named by password_env.
    smtp_url     text NOT NULL,
    password_env text,
    -- 0 means no cap.
    daily_cap    integer NOT NULL DEFAULT 0 CHECK (daily_cap >= 0),
    status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
    paused_until timestamptz,
    pause_reason text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, address)
);

CREATE TABLE campaign_mailboxes (
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    mailbox_id  bigint NOT NULL REFERENCES mailboxes (id) ON DELETE CASCADE,
    PRIMARY KEY (campaign_id, mailbox_id)
);

-- Schedule state per (campaign, lead). next_send_at is the due clock for
-- active rows (and the lease end while locked).
CREATE TABLE enrollments (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id  bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    lead_id      bigint NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    status       text NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'completed', 'bounced', 'replied', 'unsubscribed', 'failed')),
    -- The next step to send, 1-based.
    current_step integer NOT NULL DEFAULT 1 CHECK (current_step >= 1),
    next_send_at timestamptz NOT NULL DEFAULT now(),
    -- Bound at enrollment; sticky once step 1 is sent (thread consistency).
    mailbox_id   bigint REFERENCES mailboxes (id) ON DELETE SET NULL,
    attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    locked_until timestamptz,
    locked_by    text,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, lead_id)
) WITH (fillfactor = 70);

CREATE INDEX enrollments_claim_idx ON enrollments (next_send_at) WHERE status = 'active';
CREATE INDEX enrollments_mailbox_active_idx ON enrollments (mailbox_id) WHERE status = 'active';
CREATE INDEX enrollments_lead_idx ON enrollments (lead_id);

-- One row per (enrollment, step): written 'sending' before SMTP, 'sent'
-- after. The unique key is what makes a step at-most-once.
CREATE TABLE sends (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    enrollment_id bigint NOT NULL REFERENCES enrollments (id) ON DELETE CASCADE,
    step          integer NOT NULL CHECK (step >= 1),
    mailbox_id    bigint REFERENCES mailboxes (id) ON DELETE SET NULL,
    message_id    text NOT NULL UNIQUE,
    status        text NOT NULL DEFAULT 'sending' CHECK (status IN ('sending', 'sent', 'failed')),
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    sent_at       timestamptz,
    UNIQUE (enrollment_id, step)
);
CREATE INDEX sends_mailbox_created_idx ON sends (mailbox_id, created_at);
CREATE INDEX sends_sending_idx ON sends (created_at) WHERE status = 'sending';

-- Addresses that must never be mailed again (hard bounces, unsubscribes).
CREATE TABLE suppressions (
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email        text NOT NULL,
    reason       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, email)
);

-- Outbox of domain events, written in the same transaction as the state
-- change; delivered (e.g. to Slack) at most once per dedupe_key.
CREATE TABLE events (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text NOT NULL
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused', 'mailbox_disabled', 'provider_auth_failed')),
    workspace_id    bigint REFERENCES workspaces (id) ON DELETE CASCADE,
    provider        text,
    mailbox_id      bigint REFERENCES mailboxes (id) ON DELETE SET NULL,
    dedupe_key      text NOT NULL UNIQUE,
    payload         jsonb NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    locked_until    timestamptz,
    delivered_at    timestamptz,
    last_error      text
);
CREATE INDEX events_undelivered_idx ON events (next_attempt_at) WHERE delivered_at IS NULL;

-- Operator actions (requeue, breaker reset/open, workspace set, ...).
CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor      text NOT NULL,
    action     text NOT NULL,
    filters    jsonb NOT NULL DEFAULT '{}',
    affected   bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tick_runs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('enrich', 'email', 'events')),
    tick_id     text NOT NULL UNIQUE,
    host        text NOT NULL,
    pid         integer NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    claimed     integer NOT NULL DEFAULT 0,
    counts      jsonb NOT NULL DEFAULT '{}',
    -- NULL while running; 0 done, 1 error, 2 usage/config.
    exit_status integer,
    error       text
);
CREATE INDEX tick_runs_kind_started_idx ON tick_runs (kind, started_at DESC);

-- +goose Down
DROP TABLE tick_runs, audit_log, events, suppressions, sends, enrollments,
    campaign_mailboxes, mailboxes, sequence_steps, campaigns, rate_limits,
    breakers, provider_calls, lead_enrichment, leads, workspaces;
