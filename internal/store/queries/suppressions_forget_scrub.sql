-- name: SuppressionsForgetScrub :one
-- Replaces the address (pattern: a case-insensitive regular expression
-- matching it literally) with [forgotten] wherever free text may have kept
-- it: event payloads and errors, a mailbox's pause reason, an inbox's last
-- error, a skipped inbox message's reason (an error's text may quote what
-- the message held), an unmatched delivery report's reason (it names the
-- sender), a tick's error. Returns the rows changed. These tables are
-- scanned once: forgetting is a rare operator action.
WITH events_changed AS (
    UPDATE events
    SET payload    = regexp_replace(payload::text, sqlc.arg(pattern)::text, '[forgotten]', 'gi')::jsonb,
        last_error = regexp_replace(last_error, sqlc.arg(pattern)::text, '[forgotten]', 'gi')
    WHERE payload::text ~* sqlc.arg(pattern)::text OR last_error ~* sqlc.arg(pattern)::text
    RETURNING 1
),
mailboxes_changed AS (
    UPDATE mailboxes
    SET pause_reason = regexp_replace(pause_reason, sqlc.arg(pattern)::text, '[forgotten]', 'gi')
    WHERE pause_reason ~* sqlc.arg(pattern)::text
    RETURNING 1
),
inbox_changed AS (
    UPDATE inbox_checkpoints
    SET last_error = regexp_replace(last_error, sqlc.arg(pattern)::text, '[forgotten]', 'gi')
    WHERE last_error ~* sqlc.arg(pattern)::text
    RETURNING 1
),
skipped_changed AS (
    UPDATE inbox_skipped
    SET reason = regexp_replace(reason, sqlc.arg(pattern)::text, '[forgotten]', 'gi')
    WHERE reason ~* sqlc.arg(pattern)::text
    RETURNING 1
),
unmatched_changed AS (
    UPDATE inbox_unmatched
    SET reason = regexp_replace(reason, sqlc.arg(pattern)::text, '[forgotten]', 'gi')
    WHERE reason ~* sqlc.arg(pattern)::text
    RETURNING 1
),
ticks_changed AS (
    UPDATE tick_runs
    SET error = regexp_replace(error, sqlc.arg(pattern)::text, '[forgotten]', 'gi')
    WHERE error ~* sqlc.arg(pattern)::text
    RETURNING 1
)
SELECT ((SELECT count(*) FROM events_changed) + (SELECT count(*) FROM mailboxes_changed)
     + (SELECT count(*) FROM inbox_changed) + (SELECT count(*) FROM skipped_changed)
     + (SELECT count(*) FROM unmatched_changed) + (SELECT count(*) FROM ticks_changed))::bigint AS changed;
