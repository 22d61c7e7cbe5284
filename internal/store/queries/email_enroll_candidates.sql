-- name: EmailEnrollCandidates :many
-- Leads of the workspace not yet in the campaign: all of them when $3 is
-- NULL, else those whose external id or email (canonical, as leads store
-- it: address.Canonical) is listed. A lead whose address is already
-- enrolled in the campaign through
-- another lead, or repeats an earlier candidate's, comes back with
-- duplicate set: one campaign mails one address once. Leads without an
-- address yet are never duplicates here (the email tick checks again when
-- it sends). A lead whose address is on the workspace's suppression list
-- (by its hash: a forgotten person's row too) comes back with suppressed
-- set: it is never enrolled.
WITH enrolled AS (
    SELECT DISTINCT l.email AS email
    FROM enrollments e
    JOIN leads l ON l.id = e.lead_id
    WHERE e.campaign_id = sqlc.arg(campaign_id) AND coalesce(l.email, '') <> ''
),
candidates AS (
    SELECT l.id, coalesce(l.timezone, '') AS timezone, nullif(l.email, '') AS email
    FROM leads l
    WHERE l.workspace_id = sqlc.arg(workspace_id)
      AND NOT EXISTS (SELECT 1 FROM enrollments e WHERE e.campaign_id = sqlc.arg(campaign_id) AND e.lead_id = l.id)
      AND (sqlc.arg(targets)::text[] IS NULL OR l.external_id = ANY (sqlc.arg(targets)) OR l.email = ANY (sqlc.arg(targets)))
)
SELECT c.id, c.timezone,
       (c.email IS NOT NULL AND (c.email IN (SELECT email FROM enrolled)
           OR row_number() OVER (PARTITION BY c.email ORDER BY c.id) > 1))::boolean AS duplicate,
       (c.email IS NOT NULL AND EXISTS (
           SELECT 1 FROM suppressions sp
           WHERE sp.workspace_id = sqlc.arg(workspace_id) AND sp.email_sha256 = address_sha256(c.email)))::boolean AS suppressed
FROM candidates c
ORDER BY c.id;
