-- name: BenchMailboxIds :many
-- The scratch schema's mailboxes, in id order.
SELECT id FROM mailboxes ORDER BY id;
