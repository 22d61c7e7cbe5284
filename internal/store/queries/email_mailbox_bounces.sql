-- name: EmailMailboxBounces :one
-- What the bounce-rate guard reads for mailbox mailbox_id: among its last
-- window sends that reached a server (sent, delivery unknown, or refused
-- as a hard bounce; not the ones in flight), how many hard-bounced and how
-- many of the newest did in a row; the strictest limits of its campaigns
-- (0 turns one off; the defaults when it belongs to none); and whether it
-- already sends nothing (paused or disabled), and until when. The newest sends are read
-- backwards on sends_mailbox_created_idx, window rows at most.
WITH recent AS (
    SELECT r.bounced, row_number() OVER (ORDER BY r.created_at DESC, r.id DESC) AS n
    FROM (SELECT s.id, s.created_at, (s.bounced_at IS NOT NULL) AS bounced
          FROM sends s
          WHERE s.mailbox_id = sqlc.arg(mailbox_id)::bigint
            AND (s.status IN ('sent', 'delivery_unknown') OR s.bounced_at IS NOT NULL)
          ORDER BY s.created_at DESC, s.id DESC
          LIMIT sqlc.arg(window_sends)::int) r
),
limits AS (
    SELECT CASE WHEN count(*) = 0 THEN sqlc.arg(rate_default)::float8
                ELSE coalesce(min(c.bounce_rate_max) FILTER (WHERE c.bounce_rate_max > 0), 0)::float8 END AS rate_max,
           CASE WHEN count(*) = 0 THEN sqlc.arg(streak_default)::int
                ELSE coalesce(min(c.bounce_streak_max) FILTER (WHERE c.bounce_streak_max > 0), 0)::int END AS streak_max
    FROM campaign_mailboxes cm
    JOIN campaigns c ON c.id = cm.campaign_id
    WHERE cm.mailbox_id = sqlc.arg(mailbox_id)::bigint
)
SELECT m.workspace_id, m.address,
       (m.status <> 'active' OR coalesce(m.paused_until > now(), false))::boolean AS paused,
       -- Until when a paused mailbox sends nothing (now for a disabled one):
       -- a tick whose claim came before another tick paused it stops too.
       greatest(coalesce(m.paused_until, now()), now())::timestamptz AS paused_until,
       (SELECT count(*) FROM recent) AS sends,
       (SELECT count(*) FILTER (WHERE bounced) FROM recent) AS bounces,
       (SELECT coalesce(min(n) FILTER (WHERE NOT bounced) - 1, count(*)) FROM recent)::bigint AS streak,
       l.rate_max::float8 AS rate_max, l.streak_max::int AS streak_max
FROM mailboxes m, limits l
WHERE m.id = sqlc.arg(mailbox_id)::bigint;
