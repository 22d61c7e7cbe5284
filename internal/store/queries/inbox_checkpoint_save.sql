-- name: InboxCheckpointSave :exec
-- Records how far tick $5 read mailbox $1 (UIDVALIDITY $2, last UID $3) and
-- its error ($4, empty for none); $6 ends the lease.
UPDATE inbox_checkpoints
SET uid_validity = $2,
    last_uid     = $3,
    checked_at   = now(),
    last_error   = NULLIF($4::text, ''),
    locked_until = CASE WHEN $6::boolean THEN NULL ELSE locked_until END,
    locked_by    = CASE WHEN $6::boolean THEN NULL ELSE locked_by END
WHERE mailbox_id = $1 AND locked_by = $5::text;
