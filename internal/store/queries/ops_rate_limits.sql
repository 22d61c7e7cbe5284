-- name: OpsRateLimits :many
-- Token buckets drawn ahead of now that apply to the workspace: provider-wide
-- keys ('findymail') and the workspace's own ('findymail/ws/12').
SELECT rl.key, rl.tat
FROM rate_limits rl
WHERE rl.tat > sqlc.arg(now)
  AND (rl.key NOT LIKE '%/ws/%' OR rl.key LIKE '%/ws/' || sqlc.arg(workspace_id)::bigint::text)
ORDER BY rl.key;
