-- Least-privilege role for ticks (enrich tick, email tick, inbox tick, events deliver, prune).
-- Ticks run DML on the tables they need and nothing else: no DDL, no
-- workspace or campaign changes, no audit log rewrites. Apply it after
-- `rindactl migrate` as an owner/superuser:
--
--   psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -f sql/roles.sql
--   ALTER ROLE rindactl_tick PASSWORD '...';   -- then connect ticks as it
--
-- The test suite clones every test database from a template with these
-- grants applied, and runs tick tests as this role.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        CREATE ROLE rindactl_tick LOGIN;
    END IF;
END
$$;

REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO rindactl_tick;

-- Read-only configuration and profile data.
GRANT SELECT ON workspaces, campaigns, sequence_steps, campaign_mailboxes, goose_db_version TO rindactl_tick;

-- Leads: read profiles, write back only what enrichment finds.
GRANT SELECT ON leads TO rindactl_tick;
GRANT UPDATE (email, email_source, updated_at) ON leads TO rindactl_tick;

-- Queue state the ticks claim and record.
GRANT SELECT, UPDATE ON lead_enrichment, enrollments TO rindactl_tick;
GRANT SELECT, UPDATE (status, paused_until, pause_reason, updated_at) ON mailboxes TO rindactl_tick;
-- Warm-up ramp growth and the human gap between a mailbox's sends.
GRANT UPDATE (ramp_level, ramp_next_at, next_send_not_before) ON mailboxes TO rindactl_tick;

-- Guards, ledgers, outbox and history the ticks append to.
GRANT SELECT, INSERT, UPDATE ON breakers, rate_limits, provider_calls, workspace_spend, sends, events, tick_runs, inbox_checkpoints TO rindactl_tick;
GRANT SELECT, INSERT ON suppressions TO rindactl_tick;

-- Email: one address per campaign, and the metrics' running totals (issue 15).
GRANT SELECT, INSERT ON campaign_recipients TO rindactl_tick;
GRANT SELECT, INSERT, UPDATE ON email_mailbox_totals TO rindactl_tick;

-- Inbox: messages skipped as unprocessable (issue 25).
GRANT SELECT, INSERT, UPDATE ON inbox_skipped TO rindactl_tick;
-- Inbox: delivery reports that proved nothing of ours (issue 37).
GRANT SELECT, INSERT, UPDATE ON inbox_unmatched TO rindactl_tick;

-- Provider accounts (issue 24): credits read from the providers' account
-- endpoints, shared by every process; workspaces' own API keys, sealed
-- (read only: `workspace set-key` and `secrets rotate` run as the owner).
GRANT SELECT, INSERT, UPDATE ON provider_credits TO rindactl_tick;
GRANT SELECT ON workspace_provider_keys TO rindactl_tick;

-- Unsubscribes (issue 25): the email tick creates a workspace's token key on
-- first use; `unsubscribe serve` (which may run as this role) records each
-- token used, ends the enrollments and suppresses the address.
GRANT SELECT, INSERT ON unsubscribe_keys, unsubscribes TO rindactl_tick;

-- Running totals of the Prometheus counters (issue 27).
GRANT SELECT, INSERT, UPDATE ON metric_totals TO rindactl_tick;

-- prune (issue 30): old rows of the history the ticks write. audit_log and
-- enrollments are not granted: an owner prunes them on purpose.
GRANT DELETE ON sends, provider_calls, events, tick_runs TO rindactl_tick;

-- OAuth2 mailboxes (issue 38): the ticks read the sealed tokens and record
-- each refresh (and a revoked grant) under the row's lock; `mailbox
-- authorize` stores a grant as the owner.
GRANT SELECT, UPDATE ON mailbox_oauth_tokens TO rindactl_tick;
