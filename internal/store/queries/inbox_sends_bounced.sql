-- name: InboxSendsBounced :execrows
-- Records a hard bounce on the sends ids (the first one counts), for the
-- bounce-rate guard.
UPDATE sends
SET bounced_at = coalesce(bounced_at, now())
WHERE id = ANY (sqlc.arg(ids)::bigint[]);
