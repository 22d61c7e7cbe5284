-- name: UnsubscribeKeyGet :one
-- The workspace's unsubscribe token key, if it has one yet.
SELECT key FROM unsubscribe_keys WHERE workspace_id = sqlc.arg(workspace_id);
