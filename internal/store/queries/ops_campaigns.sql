-- name: OpsCampaigns :many
-- Campaigns with their sending window and active enrollment count (an
-- index-only count on enrollments_campaign_claim_idx), and the enrollments
-- whose delivery is unknown (enrollments_delivery_unknown_idx).
SELECT c.id, w.name AS workspace, c.name, c.status,
       coalesce(c.window_timezone, ''), coalesce(c.window_days, '{}'),
       coalesce(to_char(c.window_start, 'HH24:MI'), '')::text AS window_start,
       coalesce(to_char(c.window_end, 'HH24:MI'), '')::text AS window_end,
       (SELECT count(*) FROM enrollments e WHERE e.campaign_id = c.id AND e.status = 'active') AS active,
       (SELECT count(*) FROM enrollments e WHERE e.campaign_id = c.id AND e.status = 'delivery_unknown') AS delivery_unknown
FROM campaigns c
JOIN workspaces w ON w.id = c.workspace_id
WHERE (sqlc.narg(workspace_id)::bigint IS NULL OR c.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(campaign_id)::bigint IS NULL OR c.id = sqlc.narg(campaign_id))
ORDER BY w.name, c.name;
