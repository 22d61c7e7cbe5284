-- name: GuardBreakerTrip :one
-- Open a breaker now (quota, auth, a failed probe, an operator) and write
-- its events in the same statement. Opening a closed breaker starts a new
-- episode; re-opening one that is open or half-open stays in its episode.
-- Events are keyed by kind, workspace, provider and episode, so racing
-- callers write each event once per episode. The first kind is the
-- episode's alert (posted to Slack) when this trip starts the episode; the
-- others stay in the outbox unposted: one incident, one message.
--
-- $1 workspace_id, $2 provider, $3 open for, $4 reason, $5 event kinds,
-- $6 exact (an operator's window replaces a longer one), $7 the Retry-After
-- behind the window ('0' = none).
WITH up AS (
    INSERT INTO breakers AS b (workspace_id, provider, state, open_until, reason, opened_at, episode, retry_after)
    VALUES (sqlc.arg(workspace_id)::bigint, sqlc.arg(provider)::text, 'open', now() + sqlc.arg(cooldown)::interval, sqlc.arg(reason)::text, now(), 1, nullif(sqlc.arg(retry_after)::interval, '0'))
    ON CONFLICT (workspace_id, provider) DO UPDATE SET
        state                = 'open',
        open_until           = CASE WHEN b.state = 'open' AND NOT sqlc.arg(force)::boolean
                                    THEN greatest(b.open_until, excluded.open_until)
                                    ELSE excluded.open_until END,
        reason               = excluded.reason,
        retry_after          = excluded.retry_after,
        episode              = b.episode + (b.state = 'closed')::int,
        opened_at            = CASE WHEN b.state = 'closed' THEN now() ELSE b.opened_at END,
        probe_owner          = NULL,
        probe_until          = NULL,
        consecutive_failures = 0,
        updated_at           = now()
    RETURNING workspace_id, provider, episode, open_until, reason, opened_at
), ev AS (
    INSERT INTO events (kind, workspace_id, provider, dedupe_key, alert, payload)
    SELECT k.kind, up.workspace_id, up.provider,
           k.kind || ':' || up.workspace_id || ':' || up.provider || ':' || up.episode,
           k.ord = 1 AND up.opened_at = now(),
           jsonb_build_object(
               'workspace', (SELECT name FROM workspaces WHERE id = up.workspace_id),
               'provider', up.provider, 'reason', up.reason,
               'until', up.open_until, 'episode', up.episode)
    FROM up, unnest(sqlc.arg(kinds)::text[]) WITH ORDINALITY AS k(kind, ord)
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING 1
)
SELECT up.episode, up.open_until, (SELECT count(*) FROM ev) FROM up;
