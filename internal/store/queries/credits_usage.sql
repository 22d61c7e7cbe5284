-- name: CreditsUsage :one
-- Billed calls on one provider account: in the last hour (the runway's
-- pace) and since the account's last credits reading (read_at; what the
-- reading no longer counts). The account is a workspace's own key
-- (workspace_id), or the host's key (NULL), which every workspace without
-- a key of its own for the provider shares. Each workspace's ledger is read
-- through its (workspace_id, created_at) index, from the earlier of the
-- two bounds.
SELECT coalesce(sum(c.hour), 0)::bigint AS billed_hour, coalesce(sum(c.since), 0)::bigint AS billed_since
FROM workspaces w
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE pc.created_at > now() - interval '1 hour') AS hour,
           count(*) FILTER (WHERE pc.created_at > sqlc.arg(since)::timestamptz) AS since
    FROM provider_calls pc
    WHERE pc.workspace_id = w.id AND pc.created_at > least(now() - interval '1 hour', sqlc.arg(since)::timestamptz)
      AND pc.provider = sqlc.arg(provider) AND pc.state <> 'refunded'
) c
WHERE CASE WHEN sqlc.narg(workspace_id)::bigint IS NULL
           THEN NOT EXISTS (SELECT 1 FROM workspace_provider_keys k WHERE k.workspace_id = w.id AND k.provider = sqlc.arg(provider))
           ELSE w.id = sqlc.narg(workspace_id) END;
