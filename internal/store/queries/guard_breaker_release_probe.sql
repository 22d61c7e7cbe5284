-- name: GuardBreakerReleaseProbe :exec
-- Give back a half-open probe that was claimed but not used (the call was
-- refused by the bucket or the ceiling), so the next caller may probe.
-- $1 workspace_id, $2 provider, $3 probe owner.
UPDATE breakers
SET probe_owner = NULL, probe_until = NULL, updated_at = now()
WHERE workspace_id = sqlc.arg(workspace_id)::bigint AND provider = sqlc.arg(provider)::text AND probe_owner = sqlc.arg(probe_owner)::text;
