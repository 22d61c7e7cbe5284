-- History that never slows a tick (issue 30).
--
-- `rindactl prune` is a tick like the others: its runs are tick_runs rows
-- of kind 'prune', and it deletes old rows of the tables that only grow in
-- small batches by key (docs/retention.md). The tick role may delete from
-- the history it writes itself (sends, provider_calls, events, tick_runs);
-- audit_log and enrollments are kept unless an owner prunes them on purpose.
--
-- NO TRANSACTION: every statement is idempotent, so a migration cut short
-- can simply run again.

-- +goose NO TRANSACTION
-- +goose Up
ALTER TABLE tick_runs DROP CONSTRAINT IF EXISTS tick_runs_kind_check;
ALTER TABLE tick_runs ADD CONSTRAINT tick_runs_kind_check CHECK (kind IN ('enrich', 'email', 'events', 'inbox', 'prune'));

-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        GRANT DELETE ON sends, provider_calls, events, tick_runs TO rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'rindactl_tick') THEN
        REVOKE DELETE ON sends, provider_calls, events, tick_runs FROM rindactl_tick;
    END IF;
END
$$;
-- +goose StatementEnd
DELETE FROM tick_runs WHERE kind = 'prune';
ALTER TABLE tick_runs DROP CONSTRAINT IF EXISTS tick_runs_kind_check;
ALTER TABLE tick_runs ADD CONSTRAINT tick_runs_kind_check CHECK (kind IN ('enrich', 'email', 'events', 'inbox'));
