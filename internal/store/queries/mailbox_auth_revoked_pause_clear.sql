-- name: MailboxAuthRevokedPauseClear :execrows
-- A new grant ends a revoked-grant pause at once; any other pause (a
-- bounce guard, an operator's) stays.
UPDATE mailboxes
SET paused_until = NULL, pause_reason = NULL, updated_at = now()
WHERE id = sqlc.arg(mailbox_id) AND paused_until IS NOT NULL AND pause_reason LIKE 'mailbox_auth_revoked:%';
