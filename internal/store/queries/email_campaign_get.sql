-- name: EmailCampaignGet :one
SELECT c.id, c.workspace_id, w.name AS workspace, c.name, coalesce(c.window_timezone, '')::text AS window_timezone, coalesce(c.window_days, '{}')::text[] AS window_days,
       coalesce(to_char(c.window_start, 'HH24:MI'), '')::text AS window_start, coalesce(to_char(c.window_end, 'HH24:MI'), '')::text AS window_end,
       coalesce(c.unsubscribe_url, '')::text AS unsubscribe_url, c.status, c.follow_ups_first,
       c.bounce_rate_max::float8 AS bounce_rate_max, c.bounce_streak_max
FROM campaigns c
JOIN workspaces w ON w.id = c.workspace_id
WHERE c.id = sqlc.arg(id);
