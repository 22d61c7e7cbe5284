-- name: GuardBreakerFailure :one
-- Count one transient failure; the threshold-th consecutive one opens a
-- closed breaker for the short window (a new episode, with breaker_opened
-- written in the same statement).
--
-- $1 workspace_id, $2 provider, $3 threshold, $4 open for, $5 reason,
-- $6 the Retry-After behind the window ('0' = none), kept while it is open.
WITH up AS (
    INSERT INTO breakers AS b (workspace_id, provider, state, consecutive_failures, open_until, reason, opened_at, episode, retry_after)
    VALUES ($1::bigint, $2::text,
            CASE WHEN $3::int <= 1 THEN 'open' ELSE 'closed' END, 1,
            CASE WHEN $3::int <= 1 THEN now() + $4::interval END,
            CASE WHEN $3::int <= 1 THEN $5::text END,
            CASE WHEN $3::int <= 1 THEN now() END,
            CASE WHEN $3::int <= 1 THEN 1 ELSE 0 END,
            CASE WHEN $3::int <= 1 THEN nullif($6::interval, '0') END)
    ON CONFLICT (workspace_id, provider) DO UPDATE SET
        consecutive_failures = b.consecutive_failures + 1,
        state      = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= $3::int THEN 'open' ELSE b.state END,
        open_until = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= $3::int THEN now() + $4::interval ELSE b.open_until END,
        reason     = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= $3::int THEN $5::text ELSE b.reason END,
        opened_at  = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= $3::int THEN now() ELSE b.opened_at END,
        retry_after = CASE WHEN b.state = 'closed' AND b.consecutive_failures + 1 >= $3::int THEN nullif($6::interval, '0') ELSE b.retry_after END,
        episode    = b.episode + (b.state = 'closed' AND b.consecutive_failures + 1 >= $3::int)::int,
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
