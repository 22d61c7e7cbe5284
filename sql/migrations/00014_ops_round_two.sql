-- Operations as deployed, round two (issue 27).

-- +goose Up
-- A mailbox's SMTP greeting name (EHLO/HELO) when its server wants a
-- particular one; NULL: RINDA_SMTP_HELO, else the host's FQDN, else an
-- address literal. tls_ca: a PEM file of a private CA trusted for this
-- mailbox's SMTP and IMAP servers, on top of the system roots.
ALTER TABLE mailboxes ADD COLUMN helo text, ADD COLUMN tls_ca text;

-- +goose Down
ALTER TABLE mailboxes DROP COLUMN IF EXISTS tls_ca, DROP COLUMN IF EXISTS helo;
