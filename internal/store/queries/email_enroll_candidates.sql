-- Leads of the workspace not yet in the campaign: all of them when $3 is
-- NULL, else those whose external id or email is listed.
SELECT l.id, coalesce(l.timezone, '')
FROM leads l
WHERE l.workspace_id = $1
  AND NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.campaign_id = $2 AND e.lead_id = l.id)
  AND ($3::text[] IS NULL OR l.external_id = ANY ($3) OR lower(l.email) = ANY ($3))
ORDER BY l.id
