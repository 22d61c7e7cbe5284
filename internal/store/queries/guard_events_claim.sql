-- name: GuardEventsClaim :many
-- Claim due undelivered alerts for delivery under a lease (an episode's
-- other events are listed, never posted). SKIP LOCKED and
-- the lease keep concurrent deliverers off each other's events.
-- $1 limit, $2 lease.
UPDATE events e
SET locked_until = now() + sqlc.arg(lease)::interval
FROM (
    SELECT id FROM events
    WHERE delivered_at IS NULL AND alert AND next_attempt_at <= now()
      AND (locked_until IS NULL OR locked_until < now())
    ORDER BY next_attempt_at, id
    LIMIT sqlc.arg(batch)::int
    FOR UPDATE SKIP LOCKED
) due
WHERE e.id = due.id
RETURNING e.id, e.kind, e.workspace_id, e.provider, e.payload, e.created_at, e.attempts, e.locked_until;
