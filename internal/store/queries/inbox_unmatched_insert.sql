-- name: InboxUnmatchedInsert :exec
-- Records a delivery report that proved nothing of ours (issue 37): it
-- ended nothing and counts toward no bounce rate; `why mailbox` and the
-- tick's report show it. Read again (a new UIDVALIDITY), it stays one row.
INSERT INTO inbox_unmatched (mailbox_id, uid_validity, uid, reason, tick_id)
VALUES (sqlc.arg(mailbox_id)::bigint, sqlc.arg(uid_validity)::bigint, sqlc.arg(uid)::bigint, sqlc.arg(reason)::text, sqlc.arg(tick_id)::text)
ON CONFLICT (mailbox_id, uid_validity, uid) DO UPDATE
SET reason = EXCLUDED.reason, tick_id = EXCLUDED.tick_id, recorded_at = now();
