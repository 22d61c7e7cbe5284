-- name: OpsRateLimits :many
-- Token buckets drawn ahead of $1 that apply to workspace $2: provider-wide
-- keys ('findymail') and the workspace's own ('findymail/ws/12').
SELECT rl.key, rl.tat
FROM rate_limits rl
WHERE rl.tat > $1
  AND (rl.key NOT LIKE '%/ws/%' OR rl.key LIKE '%/ws/' || $2::bigint::text)
ORDER BY rl.key;
