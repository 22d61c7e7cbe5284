-- Email under hostile SMTP (issue 15).
--   * delivery_unknown: the final dot went out and no answer came back (or a
--     tick died between 'sending' and 'sent'). The step is never resent by a
--     tick; an operator requeues it or leaves it. Enrollments and sends get
--     the status, events the kind (one per step).
--   * campaign_recipients: one campaign mails one (normalised) address from
--     one enrollment only, whatever duplicate leads exist. The email tick
--     claims the address in the same statement that records 'sending'.
--   * email_mailbox_totals: running totals per mailbox for the metrics
--     textfile, so counters are cumulative across ticks (rate() works).

-- +goose Up
ALTER TABLE enrollments DROP CONSTRAINT enrollments_status_check,
    ADD CONSTRAINT enrollments_status_check
        CHECK (status IN ('active', 'completed', 'bounced', 'replied', 'unsubscribed', 'failed', 'delivery_unknown'));
ALTER TABLE sends DROP CONSTRAINT sends_status_check,
    ADD CONSTRAINT sends_status_check CHECK (status IN ('sending', 'sent', 'failed', 'delivery_unknown'));
ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed', 'delivery_unknown'));

-- status and requeue find them without walking the table.
CREATE INDEX enrollments_delivery_unknown_idx ON enrollments (campaign_id) WHERE status = 'delivery_unknown';

-- No foreign keys: it is written once per message on the hot path, and a
-- key check would lock the campaign row from every tick at once. A row
-- outlives its enrollment on purpose: the address was mailed.
CREATE TABLE campaign_recipients (
    campaign_id   bigint NOT NULL,
    -- lower(btrim(leads.email)) at the first send.
    email         text NOT NULL,
    enrollment_id bigint NOT NULL,
    PRIMARY KEY (campaign_id, email)
);

-- Addresses already mailed keep their first enrollment.
INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
SELECT DISTINCT ON (e.campaign_id, lower(btrim(l.email))) e.campaign_id, lower(btrim(l.email)), e.id
FROM sends s
JOIN enrollments e ON e.id = s.enrollment_id
JOIN leads l ON l.id = e.lead_id
WHERE s.status <> 'failed' AND coalesce(btrim(l.email), '') <> ''
ORDER BY e.campaign_id, lower(btrim(l.email)), s.created_at, e.id;

CREATE TABLE email_mailbox_totals (
    mailbox_id       bigint PRIMARY KEY REFERENCES mailboxes (id) ON DELETE CASCADE,
    sent             bigint NOT NULL DEFAULT 0,
    failed           bigint NOT NULL DEFAULT 0,
    deferred         bigint NOT NULL DEFAULT 0,
    delivery_unknown bigint NOT NULL DEFAULT 0,
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT ON campaign_recipients TO rindactl_tick;
        GRANT SELECT, INSERT, UPDATE ON email_mailbox_totals TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE email_mailbox_totals, campaign_recipients;
DROP INDEX enrollments_delivery_unknown_idx;
DELETE FROM events WHERE kind = 'delivery_unknown';
UPDATE sends SET status = 'sending' WHERE status = 'delivery_unknown';
UPDATE enrollments SET status = 'failed' WHERE status = 'delivery_unknown';
ALTER TABLE events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check
        CHECK (kind IN ('quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached', 'mailbox_paused',
                        'mailbox_disabled', 'provider_auth_failed'));
ALTER TABLE sends DROP CONSTRAINT sends_status_check,
    ADD CONSTRAINT sends_status_check CHECK (status IN ('sending', 'sent', 'failed'));
ALTER TABLE enrollments DROP CONSTRAINT enrollments_status_check,
    ADD CONSTRAINT enrollments_status_check
        CHECK (status IN ('active', 'completed', 'bounced', 'replied', 'unsubscribed', 'failed'));
