-- name: GuardEventsFailed :exec
-- Record a failed delivery and schedule the next attempt.
-- $1 event id, $2 lease (locked_until as claimed), $3 retry in, $4 error.
UPDATE events
SET attempts = attempts + 1, next_attempt_at = now() + sqlc.arg(backoff)::interval,
    locked_until = NULL, last_error = sqlc.arg(last_error)::text
WHERE id = sqlc.arg(id)::bigint AND delivered_at IS NULL AND locked_until = sqlc.arg(locked_until)::timestamptz;
