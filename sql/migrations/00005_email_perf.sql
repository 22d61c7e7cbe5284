-- Email tick write path (issue 5): every message writes its sends row twice,
-- 'sending' then 'sent'. sends_sending_idx made the second write touch every
-- index of the table: an index predicate on status means the update changes
-- an indexed column, so it can never be HOT. Nothing reads that index (a
-- step left 'sending' is found through its enrollment, on the unique key),
-- so it goes, and the table keeps half of each page free so the 'sent'
-- version fits beside the 'sending' one (HOT, no index entry at all).
-- fillfactor applies to pages written from now on; existing rows are settled.
-- CONCURRENTLY: a deploy must not block running ticks.

-- +goose NO TRANSACTION
-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS sends_sending_idx;
ALTER TABLE sends SET (fillfactor = 50);

-- +goose Down
ALTER TABLE sends RESET (fillfactor);
CREATE INDEX CONCURRENTLY IF NOT EXISTS sends_sending_idx ON sends (created_at) WHERE status = 'sending';
