-- name: UnsubscribeKeyInsert :many
-- Creates the workspace's unsubscribe token key. No row back means another
-- process created it first: read that one (UnsubscribeKeyGet).
INSERT INTO unsubscribe_keys (workspace_id, key)
VALUES (sqlc.arg(workspace_id), sqlc.arg(key))
ON CONFLICT (workspace_id) DO NOTHING
RETURNING key;
