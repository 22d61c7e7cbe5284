-- name: EmailClaimShare :one
-- The email ticks claiming now besides tick $tick_id (unfinished, before
-- their claims_until): the claim serves the mailboxes of its share first
-- (store.shareMask divides the mailboxes among them). A tick that died is
-- counted only until its claims_until. Reads tick_runs_open_idx: the
-- unfinished runs, not the history.
SELECT ARRAY(
    SELECT r.tick_id
    FROM tick_runs r
    WHERE r.kind = 'email' AND r.finished_at IS NULL
      AND r.claims_until > now() AND r.tick_id <> sqlc.arg(tick_id)
    ORDER BY r.tick_id
)::text[] AS others;
