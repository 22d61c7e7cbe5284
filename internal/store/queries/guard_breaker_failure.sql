-- name: GuardBreakerFailure :one
-- Count one transient failure; the threshold-th consecutive one opens a
-- closed breaker for the short window (a new episode, with breaker_opened
-- written in the same statement).
--
-- $1 workspace_id, $2 provider, $3 threshold, $4 open for, $5 reason,
-- $6 the Retry-After behind the window ('0' = none), kept while it is open.
WITH up AS (
    INSERT INTO breakers AS b (workspace_id, provider, state, consecutive_failures, open_until, reason, opened_at, episode, retry_after)
    VALUES (sqlc.arg(workspace_id)::bigint, sqlc.arg(provider)::text,
            CASE WHEN sqlc.arg(threshold)::int <= 1 THEN 'open' ELSE 'closed' END, 1,
            CASE WHEN sqlc.arg(threshold)::int <= 1 THEN now() + sqlc.arg(cooldown)::interval END,
            CASE WHEN sqlc.arg(threshold)::int <= 1 THEN sqlc.arg(reason)::text END,
            CASE WHEN sqlc.arg(threshold)::int <= 1 THEN now() END,
            CASE WHEN sqlc.arg(threshold)::int <= 1 THEN 1 ELSE 0 END,
            CASE WHEN sqlc.arg(threshold)::int <= 1 THEN nullif(sqlc.arg(retry_after)::interval, '0') END)
    ON CONFLICT (workspace_id, provider) DO UPDATE SET
        consecutive_failures = b.consecutive_failures + 1,
        state      = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= sqlc.arg(threshold)::int THEN 'open' ELSE b.state END,
        open_until = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= sqlc.arg(threshold)::int THEN now() + sqlc.arg(cooldown)::interval ELSE b.open_until END,
        reason     = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= sqlc.arg(threshold)::int THEN sqlc.arg(reason)::text ELSE b.reason END,
        opened_at  = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= sqlc.arg(threshold)::int THEN now() ELSE b.opened_at END,
        retry_after = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= sqlc.arg(threshold)::int THEN nullif(sqlc.arg(retry_after)::interval, '0') ELSE b.retry_after END,
        episode    = b.episode + (b.state = 'closed' AND b.consecutive_failures + 1 >= sqlc.arg(threshold)::int)::int,
        updated_at = now()
    RETURNING workspace_id, provider, state, episode, open_until, reason, consecutive_failures,
              (state = 'open' AND opened_at = now()) AS opened
), ev AS (
    INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload)
    SELECT 'breaker_opened', up.workspace_id, up.provider,
           'breaker_opened:' || up.workspace_id || ':' || up.provider || ':' || up.episode,
           jsonb_build_object(
               'workspace', (SELECT name FROM workspaces WHERE id = up.workspace_id),
               'provider', up.provider, 'reason', up.reason,
               'until', up.open_until, 'episode', up.episode)
    FROM up
    WHERE up.opened
    ON CONFLICT (dedupe_key) DO NOTHING
)
SELECT state, open_until, consecutive_failures FROM up;
