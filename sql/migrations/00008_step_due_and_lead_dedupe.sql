-- Issue 16.
--
-- 1. enrollments.step_due_at: when the current step first became due.
--    next_send_at is the claim queue's key, so a lease (claim) and a retry
--    (backoff) both move it; `status --overdue` must measure lateness from
--    the original due time whatever they did. A trigger keeps it for every
--    writer (enroll, claim, settle, requeue, rebind): it follows
--    next_send_at only when the enrollment is created, moves to another
--    step or becomes active again (requeue), and stays put otherwise.
-- 2. Lead de-duplication for imports without external_id: an address is
--    one lead per workspace (lower-cased), and a lead without an address is
--    its name at its company's domain. These indexes serve the import's
--    lookups; they are not unique, since older data may hold duplicates.
--    Each key is one expression with the workspace inside it, so the
--    lookup can only use its own index: with bare workspace_id columns the
--    planner, whose statistics do not yet know the workspace an import is
--    filling, chose the (workspace_id, external_id) key and scanned the
--    whole workspace per line (a 200k-line import hit statement_timeout).
--    The address index is not partial, so the planner uses its expression
--    statistics (it ignores those of partial indexes); ANALYZE gathers them
--    now instead of whenever autovacuum comes by.

-- +goose Up
ALTER TABLE enrollments ADD COLUMN step_due_at timestamptz;
-- Existing rows: next_send_at is the best record left (a leased row's is
-- its lease end, minutes off).
UPDATE enrollments SET step_due_at = next_send_at;
ALTER TABLE enrollments ALTER COLUMN step_due_at SET NOT NULL;

-- +goose StatementBegin
CREATE FUNCTION enrollments_step_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.step_due_at := coalesce(NEW.step_due_at, NEW.next_send_at);
    ELSIF NEW.current_step IS DISTINCT FROM OLD.current_step
       OR (NEW.status = 'active' AND OLD.status <> 'active') THEN
        NEW.step_due_at := NEW.next_send_at;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER enrollments_step_due BEFORE INSERT OR UPDATE ON enrollments
    FOR EACH ROW EXECUTE FUNCTION enrollments_step_due();

CREATE INDEX enrollments_step_due_idx ON enrollments (step_due_at) WHERE status = 'active';

CREATE INDEX leads_dedupe_email_idx ON leads ((workspace_id::text || E'\x1f' || lower(email)));
CREATE INDEX leads_dedupe_name_idx ON leads
    ((workspace_id::text || E'\x1f' || company_domain || E'\x1f' || lower(first_name) || E'\x1f' || lower(last_name)))
    WHERE external_id IS NULL;
ANALYZE leads;

-- +goose Down
DROP INDEX leads_dedupe_name_idx;
DROP INDEX leads_dedupe_email_idx;
DROP INDEX enrollments_step_due_idx;
DROP TRIGGER enrollments_step_due ON enrollments;
DROP FUNCTION enrollments_step_due();
ALTER TABLE enrollments DROP COLUMN step_due_at;
