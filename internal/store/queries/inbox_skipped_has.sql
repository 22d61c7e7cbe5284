-- name: InboxSkippedHas :one
-- Whether message uid (under uid_validity) of the mailbox was recorded in
-- inbox_skipped: a UID a server left out of a FETCH answer once is passed
-- over the second time.
SELECT EXISTS (
    SELECT 1 FROM inbox_skipped
    WHERE mailbox_id = sqlc.arg(mailbox_id)::bigint AND uid_validity = sqlc.arg(uid_validity)::bigint AND uid = sqlc.arg(uid)::bigint
)::boolean;
