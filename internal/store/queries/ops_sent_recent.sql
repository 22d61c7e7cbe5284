-- name: OpsSentRecent :one
-- Messages handed to SMTP (not failed) since since, for `status --watch`'s
-- sent-per-minute; counted per mailbox on sends_mailbox_created_idx so a
-- large sends table is never scanned.
SELECT coalesce(sum(n.c), 0)::bigint AS sent
FROM mailboxes m
CROSS JOIN LATERAL (SELECT count(*) AS c
                    FROM sends s
                    WHERE s.mailbox_id = m.id AND s.created_at > sqlc.arg(since)::timestamptz AND s.status <> 'failed') n;
