-- name: GuardEventsDelivered :execrows
-- Mark a claimed event delivered. The lease value identifies the claim, so
-- a deliverer whose lease ran out cannot mark another's claim.
-- $1 event id, $2 lease (locked_until as claimed).
UPDATE events
SET delivered_at = now(), attempts = attempts + 1, locked_until = NULL, last_error = NULL
WHERE id = sqlc.arg(id)::bigint AND delivered_at IS NULL AND locked_until = sqlc.arg(locked_until)::timestamptz;
