-- name: EmailEventInsert :exec
-- Outbox event; the dedupe key makes one event per pause episode.
INSERT INTO events (kind, workspace_id, mailbox_id, dedupe_key, payload)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (dedupe_key) DO NOTHING;
