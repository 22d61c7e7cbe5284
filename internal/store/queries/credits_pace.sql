-- name: CreditsPace :one
-- Billed calls in the last hour on one provider account: a workspace's own
-- key (workspace_id), or the host's key (NULL), which every workspace
-- without a key of its own for the provider shares. Each workspace's
-- ledger is read through its (workspace_id, created_at) index, an hour of
-- rows at most.
SELECT coalesce(sum(c.n), 0)::bigint AS billed
FROM workspaces w
CROSS JOIN LATERAL (
    SELECT count(*) AS n
    FROM provider_calls pc
    WHERE pc.workspace_id = w.id AND pc.created_at > now() - interval '1 hour'
      AND pc.provider = sqlc.arg(provider) AND pc.state <> 'refunded'
) c
WHERE CASE WHEN sqlc.narg(workspace_id)::bigint IS NULL
           THEN NOT EXISTS (SELECT 1 FROM workspace_provider_keys k WHERE k.workspace_id = w.id AND k.provider = sqlc.arg(provider))
           ELSE w.id = sqlc.narg(workspace_id) END;
