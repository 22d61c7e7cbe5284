-- name: EmailEventInsert :exec
-- Outbox event; the dedupe key makes one event per pause episode.
INSERT INTO events (kind, workspace_id, mailbox_id, dedupe_key, payload)
VALUES (sqlc.arg(kind), sqlc.arg(workspace_id), sqlc.arg(mailbox_id), sqlc.arg(dedupe_key), sqlc.arg(payload))
ON CONFLICT (dedupe_key) DO NOTHING;
