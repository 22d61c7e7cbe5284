-- name: TickStart :one
-- Records a tick's start; finished_at stays NULL until tick_finish, so a
-- crashed tick shows as one that never finished. claims_until is when the
-- tick stops claiming (NULL: a kind that does not say; see migration 00019).
INSERT INTO tick_runs (kind, tick_id, host, pid, claims_until)
VALUES (sqlc.arg(kind), sqlc.arg(tick_id), sqlc.arg(host), sqlc.arg(pid),
        CASE WHEN sqlc.arg(claims_for)::interval > interval '0' THEN now() + sqlc.arg(claims_for)::interval END)
RETURNING started_at;
