-- Guard state additions (issue 4).

-- +goose Up
-- The outcome of the latest GCRA reservation on this bucket. The admit
-- statement sets it together with tat, so RETURNING tells the caller whether
-- it got a token without a second read.
ALTER TABLE rate_limits ADD COLUMN granted boolean NOT NULL DEFAULT true;

-- Month-to-date provider spend per workspace (reserved + settled; refunds
-- subtract). One row per workspace-month updated in place, so the ceiling
-- check is a single-row conditional upsert instead of a sum over the ledger.
CREATE TABLE workspace_spend (
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- First day of the UTC calendar month.
    month        date NOT NULL,
    spent_usd    numeric(14, 6) NOT NULL DEFAULT 0 CHECK (spent_usd >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, month)
);

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT SELECT, INSERT, UPDATE ON workspace_spend TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TABLE workspace_spend;
ALTER TABLE rate_limits DROP COLUMN granted;
