-- How far in time `inbox tick` has read a mailbox's INBOX in order: the
-- newest INTERNALDATE among the messages its checkpoint moved past. When
-- the server changes UIDVALIDITY (renumbering the INBOX), the tick finds
-- its place again by date (SEARCH SINCE, then the first message on or
-- after read_through) instead of reading the INBOX again from UID 1.

-- +goose Up
ALTER TABLE inbox_checkpoints ADD COLUMN read_through timestamptz;

-- +goose Down
ALTER TABLE inbox_checkpoints DROP COLUMN read_through;
