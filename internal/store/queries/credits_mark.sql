-- name: CreditsMark :one
-- Set whether an account's runway is under its alert threshold. The move
-- from not low to low starts an episode and writes its one credits_low
-- alert in the same statement (keyed by account and episode, so racing
-- processes write it once); the move back ends the episode quietly. The
-- row is locked first, so a racing writer sees the other's change.
WITH old AS (
    SELECT c.account, c.low FROM provider_credits c WHERE c.account = sqlc.arg(account) FOR UPDATE
), up AS (
    UPDATE provider_credits p
    SET low = sqlc.arg(low)::boolean,
        episode = p.episode + (sqlc.arg(low)::boolean AND NOT old.low)::int,
        updated_at = now()
    FROM old
    WHERE p.account = old.account
    RETURNING p.account, p.provider, p.workspace_id, p.episode, p.credits, (sqlc.arg(low)::boolean AND NOT old.low) AS started
), ev AS (
    INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload)
    SELECT 'credits_low', up.workspace_id, up.provider, 'credits_low:' || up.account || ':' || up.episode,
           jsonb_build_object(
               'workspace', coalesce((SELECT name FROM workspaces WHERE id = up.workspace_id), 'host key (all workspaces without their own)'),
               'provider', up.provider, 'reason', 'credits_low', 'episode', up.episode,
               'credits_remaining', up.credits, 'runway', sqlc.arg(runway)::text,
               'billed_calls_last_hour', sqlc.arg(per_hour)::bigint, 'alert_under', sqlc.arg(alert_under)::text)
    FROM up
    WHERE up.started
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM ev) AS alerts;
