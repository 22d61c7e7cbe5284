-- name: InboxSkipInsert :exec
-- Records a message the inbox tick could not process: the checkpoint moves
-- past it, and `why mailbox` and the tick's report show it.
INSERT INTO inbox_skipped (mailbox_id, uid_validity, uid, reason, tick_id)
VALUES (sqlc.arg(mailbox_id)::bigint, sqlc.arg(uid_validity)::bigint, sqlc.arg(uid)::bigint, sqlc.arg(reason)::text, sqlc.arg(tick_id)::text)
ON CONFLICT (mailbox_id, uid_validity, uid) DO UPDATE
SET reason = EXCLUDED.reason, tick_id = EXCLUDED.tick_id, skipped_at = now();
