-- name: EmailCampaignUpsert :one
-- Creates or updates a campaign; created is false on update.
INSERT INTO campaigns (workspace_id, name, window_timezone, window_days, window_start, window_end, unsubscribe_url, follow_ups_first,
                       bounce_rate_max, bounce_streak_max)
VALUES (sqlc.arg(workspace_id), sqlc.arg(name), sqlc.arg(window_timezone), sqlc.arg(window_days), sqlc.arg(window_start), sqlc.arg(window_end), sqlc.arg(unsubscribe_url), sqlc.arg(follow_ups_first), sqlc.arg(bounce_rate_max), sqlc.arg(bounce_streak_max))
ON CONFLICT (workspace_id, name) DO UPDATE
SET window_timezone  = EXCLUDED.window_timezone,
    window_days      = EXCLUDED.window_days,
    window_start     = EXCLUDED.window_start,
    window_end       = EXCLUDED.window_end,
    unsubscribe_url  = EXCLUDED.unsubscribe_url,
    follow_ups_first = EXCLUDED.follow_ups_first,
    bounce_rate_max   = EXCLUDED.bounce_rate_max,
    bounce_streak_max = EXCLUDED.bounce_streak_max,
    updated_at       = now()
RETURNING id, (xmax = 0) AS created;
