-- name: InboxEventSuspicious :one
-- An inbox_suspicious event, one alert per mailbox per hour: the first of
-- its mailbox in the hour takes the episode's key (mailbox and hour) and
-- is the alert posted to Slack; the others of that hour stay in the
-- outbox unposted, keyed by their message (so a message read twice writes
-- one event). Both keys go through the dedupe key's unique index: no scan
-- of events, however large the flood.
WITH alert AS (
    INSERT INTO events (kind, workspace_id, mailbox_id, dedupe_key, payload)
    VALUES ('inbox_suspicious', sqlc.arg(workspace_id)::bigint, sqlc.arg(mailbox_id)::bigint,
            sqlc.arg(episode_key)::text, sqlc.arg(payload)::jsonb)
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING 1
), quiet AS (
    INSERT INTO events (kind, workspace_id, mailbox_id, dedupe_key, alert, payload)
    SELECT 'inbox_suspicious', sqlc.arg(workspace_id)::bigint, sqlc.arg(mailbox_id)::bigint,
           sqlc.arg(message_key)::text, false, sqlc.arg(payload)::jsonb
    WHERE NOT EXISTS (SELECT 1 FROM alert)
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM alert) AS alerted;
