-- A call refused at a workspace's spend ceiling while other calls are in
-- flight may fit once they settle (a miss is refunded), so the admission
-- sums the spend they reserve (guard_admit.sql) and refuses for a minute,
-- not the month: a lead is never parked unreachable for a reservation
-- later refunded. Only calls in flight are in the index, so it stays small
-- however long the ledger grows, and the sum reads only them.

-- +goose Up
CREATE INDEX provider_calls_reserved_workspace_idx ON provider_calls (workspace_id, created_at) WHERE state = 'reserved';

-- +goose Down
DROP INDEX provider_calls_reserved_workspace_idx;
