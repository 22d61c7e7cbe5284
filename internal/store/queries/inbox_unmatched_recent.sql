-- name: InboxUnmatchedRecent :many
-- The mailbox's most recently recorded unmatched delivery reports, newest
-- first, each with how many the mailbox has in all. Reads the newest rows
-- on inbox_unmatched_recent_idx; the total counts the mailbox's rows.
SELECT uid_validity, uid, reason, tick_id, recorded_at, count(*) OVER ()::bigint AS total
FROM inbox_unmatched
WHERE mailbox_id = sqlc.arg(mailbox_id)::bigint
ORDER BY recorded_at DESC, uid DESC
LIMIT sqlc.arg(max_rows)::int;
