-- Operations as deployed, round two (issue 27).

-- +goose Up
-- A mailbox's SMTP greeting name (EHLO/HELO) when its server wants a
-- particular one; NULL: RINDA_SMTP_HELO, else the host's FQDN, else an
-- address literal. tls_ca: a PEM file of a private CA trusted for this
-- mailbox's SMTP and IMAP servers, on top of the system roots.
ALTER TABLE mailboxes ADD COLUMN helo text, ADD COLUMN tls_ca text;

-- The email claim leaves out enrollments whose lead has no address yet
-- (enrichment may still find one): they are blocked, not due. It checked
-- that per row, so 100k of them ahead in due order cost every claim ~300k
-- index entries. has_address mirrors "the lead has an email" on the
-- enrollment, so a partial index can leave them out and they cost the
-- claim nothing.
ALTER TABLE enrollments ADD COLUMN has_address boolean NOT NULL DEFAULT true;
UPDATE enrollments e SET has_address = false
FROM leads l WHERE l.id = e.lead_id AND coalesce(l.email, '') = '';

-- +goose StatementBegin
-- A new enrollment copies its lead's state. A lead without an address is
-- read FOR SHARE: an enrichment writing its address waits for this insert
-- to commit, and its trigger below then sees the new enrollment (else it
-- would miss it and the enrollment would wait forever).
CREATE FUNCTION enrollments_has_address() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT coalesce(l.email, '') <> '' INTO NEW.has_address FROM leads l WHERE l.id = NEW.lead_id;
    IF NOT NEW.has_address THEN
        SELECT coalesce(l.email, '') <> '' INTO NEW.has_address FROM leads l WHERE l.id = NEW.lead_id FOR SHARE;
    END IF;
    -- No lead: the foreign key says so.
    NEW.has_address := coalesce(NEW.has_address, true);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER enrollments_has_address BEFORE INSERT ON enrollments
    FOR EACH ROW EXECUTE FUNCTION enrollments_has_address();

-- +goose StatementBegin
-- A lead that gains (or loses) its address carries it to its enrollments.
CREATE FUNCTION leads_has_address() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE enrollments SET has_address = (coalesce(NEW.email, '') <> '')
    WHERE lead_id = NEW.id AND has_address <> (coalesce(NEW.email, '') <> '');
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER leads_has_address AFTER UPDATE OF email ON leads
    FOR EACH ROW WHEN ((coalesce(OLD.email, '') <> '') IS DISTINCT FROM (coalesce(NEW.email, '') <> ''))
    EXECUTE FUNCTION leads_has_address();

-- First steps are claimed from here (email_claim.sql: "AND e.has_address"
-- must stay literal for the planner to match the predicate).
CREATE INDEX enrollments_first_step_claim_idx ON enrollments (campaign_id, next_send_at)
    WHERE status = 'active' AND current_step = 1 AND has_address;

-- Running totals behind the Prometheus counters that are not email's
-- (rindactl_leads_total, rindactl_provider_requests_total,
-- rindactl_guard_blocked_total, rindactl_events_delivered_total): each tick
-- adds what it did when it ends, so a counter grows across runs and hosts
-- instead of holding one short process's figures. labels holds the series'
-- label values ({"outcome": "enriched"}).
CREATE TABLE metric_totals (
    metric     text NOT NULL,
    labels     jsonb NOT NULL,
    value      bigint NOT NULL CHECK (value >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (metric, labels)
);

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT, UPDATE ON metric_totals TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE IF EXISTS metric_totals;
DROP INDEX IF EXISTS enrollments_first_step_claim_idx;
DROP TRIGGER IF EXISTS leads_has_address ON leads;
DROP FUNCTION IF EXISTS leads_has_address();
DROP TRIGGER IF EXISTS enrollments_has_address ON enrollments;
DROP FUNCTION IF EXISTS enrollments_has_address();
ALTER TABLE enrollments DROP COLUMN IF EXISTS has_address;
ALTER TABLE mailboxes DROP COLUMN IF EXISTS tls_ca, DROP COLUMN IF EXISTS helo;
