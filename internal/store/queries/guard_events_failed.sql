-- name: GuardEventsFailed :exec
-- Record a failed delivery and schedule the next attempt.
-- $1 event id, $2 lease (locked_until as claimed), $3 retry in, $4 error.
UPDATE events
SET attempts = attempts + 1, next_attempt_at = now() + $3::interval,
    locked_until = NULL, last_error = $4::text
WHERE id = $1::bigint AND delivered_at IS NULL AND locked_until = $2::timestamptz;
