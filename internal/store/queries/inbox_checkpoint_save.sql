-- name: InboxCheckpointSave :execrows
-- Records how far tick tick_id read mailbox mailbox_id (uid_validity,
-- last_uid, read_through) and its error (empty for none); release ends
-- the lease. Only the lease holder writes, and progress (release false)
-- only while the lease lasts: a tick whose lease ran out changes nothing,
-- so no other tick can have read the same messages meanwhile.
UPDATE inbox_checkpoints
SET uid_validity = sqlc.arg(uid_validity)::bigint,
    last_uid     = sqlc.arg(last_uid)::bigint,
    read_through = sqlc.narg(read_through)::timestamptz,
    checked_at   = now(),
    last_error   = NULLIF(sqlc.arg(last_error)::text, ''),
    locked_until = CASE WHEN sqlc.arg(release)::boolean THEN NULL ELSE locked_until END,
    locked_by    = CASE WHEN sqlc.arg(release)::boolean THEN NULL ELSE locked_by END
WHERE mailbox_id = sqlc.arg(mailbox_id)::bigint AND locked_by = sqlc.arg(tick_id)::text
  AND (sqlc.arg(release)::boolean OR locked_until > now());
