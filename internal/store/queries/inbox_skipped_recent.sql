-- name: InboxSkippedRecent :many
-- The mailbox's most recently skipped messages, newest first.
SELECT uid_validity, uid, reason, tick_id, skipped_at
FROM inbox_skipped
WHERE mailbox_id = sqlc.arg(mailbox_id)::bigint
ORDER BY skipped_at DESC, uid DESC
LIMIT sqlc.arg(max_rows)::int;
