-- name: GuardBreakerClose :one
-- Close a breaker (a successful probe, or an operator's reset) and write
-- breaker_closed for its episode in the same statement. It is not an
-- alert: the episode's one Slack message went out when it opened.
--
-- $1 workspace_id, $2 provider, $3 probe owner ('' = whoever: a reset),
-- $4 reason.
WITH up AS (
    UPDATE breakers
    SET state = 'closed', open_until = NULL, probe_owner = NULL, probe_until = NULL,
        consecutive_failures = 0, reason = NULL, updated_at = now()
    WHERE workspace_id = sqlc.arg(workspace_id)::bigint AND provider = sqlc.arg(provider)::text
      AND (sqlc.arg(probe_owner)::text = '' OR probe_owner = sqlc.arg(probe_owner)::text)
      AND (state <> 'closed' OR consecutive_failures > 0)
    RETURNING workspace_id, provider, episode
), ev AS (
    INSERT INTO events (kind, workspace_id, provider, dedupe_key, alert, payload)
    SELECT 'breaker_closed', up.workspace_id, up.provider,
           'breaker_closed:' || up.workspace_id || ':' || up.provider || ':' || up.episode, false,
           jsonb_build_object(
               'workspace', (SELECT name FROM workspaces WHERE id = up.workspace_id),
               'provider', up.provider, 'reason', sqlc.arg(reason)::text, 'episode', up.episode)
    FROM up
    WHERE up.episode > 0
    ON CONFLICT (dedupe_key) DO NOTHING
)
SELECT count(*) FROM up;
