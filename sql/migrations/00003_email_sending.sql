-- Email sending additions (issue 5).

-- +goose Up
-- The From display name of a mailbox ("Dana from Acme").
ALTER TABLE mailboxes ADD COLUMN display_name text NOT NULL DEFAULT '';

-- The claim walks each campaign's due rows in due order, so one huge
-- campaign's backlog cannot hide a small campaign's rows from the claim.
CREATE INDEX enrollments_campaign_claim_idx ON enrollments (campaign_id, next_send_at) WHERE status = 'active';

-- +goose Down
DROP INDEX enrollments_campaign_claim_idx;
ALTER TABLE mailboxes DROP COLUMN display_name;
