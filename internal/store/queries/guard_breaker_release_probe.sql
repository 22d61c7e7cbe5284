-- name: GuardBreakerReleaseProbe :exec
-- Give back a half-open probe that was claimed but not used (the call was
-- refused by the bucket or the ceiling), so the next caller may probe.
-- $1 workspace_id, $2 provider, $3 probe owner.
UPDATE breakers
SET probe_owner = NULL, probe_until = NULL, updated_at = now()
WHERE workspace_id = $1::bigint AND provider = $2::text AND probe_owner = $3::text;
