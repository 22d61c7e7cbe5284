-- name: InboxCheckpointsEnsure :exec
-- Gives every mailbox with an imap_url a checkpoint row, so the claim finds
-- it; a new row starts at the beginning of the INBOX.
INSERT INTO inbox_checkpoints (mailbox_id)
SELECT m.id FROM mailboxes m WHERE m.imap_url IS NOT NULL
ON CONFLICT (mailbox_id) DO NOTHING;
