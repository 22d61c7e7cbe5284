-- name: EmailClaimShare :one
-- The email ticks claiming now besides tick $tick_id (unfinished, before
-- their claims_until): the claim serves the mailboxes of its share first
-- (mailbox id modulo ticks equal to rank, its place among them by tick id).
-- A tick that died is counted only until its claims_until. Reads
-- tick_runs_open_idx: the unfinished runs, not the history.
SELECT (count(*) + 1)::int AS ticks,
       count(*) FILTER (WHERE r.tick_id < sqlc.arg(tick_id))::int AS rank
FROM tick_runs r
WHERE r.kind = 'email' AND r.finished_at IS NULL
  AND r.claims_until > now() AND r.tick_id <> sqlc.arg(tick_id);
