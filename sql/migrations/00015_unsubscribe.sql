-- Unsubscribes that work out of the box, the suppression list, and
-- forgetting a person (issue 25).
--
--   * unsubscribe_keys: one HMAC key per workspace, created on demand by the
--     first email tick that mails from it. A message's unsubscribe token is
--     its enrollment id and an HMAC of it under this key: no address in the
--     URL, nothing guessable.
--   * unsubscribes: one row per token used. A token is used once; its second
--     use changes nothing (the replay guard). The row goes with its
--     enrollment.
--   * suppressions.email_sha256: the SHA-256 of the canonical address. The
--     claim, enroll and import look addresses up by it, so a forgotten
--     person's row (`rindactl lead forget`) keeps only the hash (email NULL)
--     and still suppresses the address. A trigger fills it for every row
--     written with an address, so no writer computes it.

-- +goose Up
-- The hash of an address as the suppression list keys it: the SHA-256 of
-- its canonical form (suppression.Hash in Go), for an address stored
-- canonical; lower(btrim()) makes the stored spellings agree.
-- +goose StatementBegin
CREATE FUNCTION address_sha256(address text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN sha256(convert_to(lower(btrim(address)), 'UTF8'));
-- +goose StatementEnd

CREATE TABLE unsubscribe_keys (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    key          bytea NOT NULL CHECK (length(key) = 32),
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE unsubscribes (
    enrollment_id bigint PRIMARY KEY REFERENCES enrollments (id) ON DELETE CASCADE,
    workspace_id  bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- http: the one-click POST or the confirmation page's button; mailto:
    -- the List-Unsubscribe mail read by inbox tick; apply: an operator.
    via           text NOT NULL CHECK (via IN ('http', 'mailto', 'apply')),
    created_at    timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE suppressions ADD COLUMN email_sha256 bytea;
UPDATE suppressions SET email_sha256 = address_sha256(email);
ALTER TABLE suppressions ALTER COLUMN email_sha256 SET NOT NULL,
    ADD CONSTRAINT suppressions_email_sha256_check CHECK (length(email_sha256) = 32);
-- email may now be NULL (forgotten), so it leaves the primary key; it stays
-- unique, which every ON CONFLICT (workspace_id, email) relies on.
ALTER TABLE suppressions DROP CONSTRAINT suppressions_pkey,
    ALTER COLUMN email DROP NOT NULL,
    ADD CONSTRAINT suppressions_email_key UNIQUE (workspace_id, email);
-- One forgotten row per address and workspace.
CREATE UNIQUE INDEX suppressions_forgotten_key ON suppressions (workspace_id, email_sha256) WHERE email IS NULL;
-- The lookup of the claim, enroll and import.
CREATE INDEX suppressions_sha256_idx ON suppressions (workspace_id, email_sha256);

-- +goose StatementBegin
CREATE FUNCTION suppressions_sha256() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.email IS NOT NULL THEN
        NEW.email_sha256 := address_sha256(NEW.email);
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER suppressions_sha256 BEFORE INSERT OR UPDATE OF email ON suppressions
    FOR EACH ROW EXECUTE FUNCTION suppressions_sha256();

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT ON unsubscribe_keys, unsubscribes TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER suppressions_sha256 ON suppressions;
DROP FUNCTION suppressions_sha256();
DELETE FROM suppressions WHERE email IS NULL;
DROP INDEX suppressions_sha256_idx, suppressions_forgotten_key;
ALTER TABLE suppressions DROP CONSTRAINT suppressions_email_key,
    ALTER COLUMN email SET NOT NULL,
    ADD PRIMARY KEY (workspace_id, email),
    DROP COLUMN email_sha256;
DROP TABLE unsubscribes, unsubscribe_keys;
DROP FUNCTION address_sha256(text);
