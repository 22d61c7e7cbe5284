-- Operator tooling (issue 6): requeue finds its rows by status without
-- walking the whole table. Both indexes are partial and cover only rows that
-- are rarely written (the ones a tick gave up on), so the claim path pays
-- nothing for them. CONCURRENTLY: a deploy must not block running ticks.

-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY IF NOT EXISTS lead_enrichment_requeue_idx
    ON lead_enrichment (status, workspace_id) WHERE status IN ('unreachable', 'enrichment_failed');
CREATE INDEX CONCURRENTLY IF NOT EXISTS enrollments_failed_idx
    ON enrollments (workspace_id, campaign_id) WHERE status = 'failed';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS enrollments_failed_idx;
DROP INDEX CONCURRENTLY IF EXISTS lead_enrichment_requeue_idx;
