-- name: GuardEventsList :many
-- Recent events, newest first; $1 limit, $2 only alerts not yet delivered.
SELECT e.id, e.kind, coalesce(w.name, '') AS workspace, coalesce(e.provider, ''), e.dedupe_key, e.payload,
       e.created_at, e.attempts, e.next_attempt_at, e.delivered_at, coalesce(e.last_error, ''), e.alert
FROM events e
LEFT JOIN workspaces w ON w.id = e.workspace_id
WHERE NOT sqlc.arg(pending_only)::boolean OR (e.delivered_at IS NULL AND e.alert)
ORDER BY e.id DESC
LIMIT sqlc.arg(max_events)::int;
