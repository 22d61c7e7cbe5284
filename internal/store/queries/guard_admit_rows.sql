-- name: GuardAdmitRows :exec
-- Create the rows an admission locks, when missing: the bucket's (at full
-- burst) and the workspace's spend for this UTC month (nothing spent).
-- Racing callers create each once.
WITH bucket AS (
    INSERT INTO rate_limits (key, tat)
    SELECT sqlc.arg(bucket_key)::text, now()
    WHERE sqlc.arg(bucket_key)::text <> ''
    ON CONFLICT (key) DO NOTHING
)
INSERT INTO workspace_spend (workspace_id, month, spent_usd)
SELECT w.id, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 0
FROM workspaces w
WHERE w.id = sqlc.arg(workspace_id)::bigint AND sqlc.arg(spend)::boolean
ON CONFLICT (workspace_id, month) DO NOTHING;
