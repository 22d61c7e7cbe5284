-- name: BenchHistorySequences :exec
-- A year of sequences for the history benchmark: n leads of the workspace
-- enrolled in the campaign on the mailboxes in turn, started evenly from
-- 365 days to 1 day ago in id order (ids grow with time, as in
-- production). Nearly all ended long ago; one in fifty is still active,
-- with its next step a year away (not due, kept by prune with its sends).
-- Each lead was enriched before it was mailed.
WITH leads_in AS (
    INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain, email, created_at, updated_at)
    SELECT sqlc.arg(workspace_id)::bigint, 'h-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000), 'company' || (g % 1000) || '.example',
           'h' || g || '@company' || (g % 1000) || '.example', t, t
    FROM generate_series(1, sqlc.arg(n)::int) g,
         LATERAL (SELECT now() - interval '365 days' + (g - 1) * (interval '364 days' / sqlc.arg(n)::int) AS t) ts
    RETURNING id, created_at
),
enriched AS (
    INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, provider, updated_at)
    SELECT id, sqlc.arg(workspace_id)::bigint, CASE WHEN id % 5 = 0 THEN 'not_found' ELSE 'enriched' END, 1, created_at, 'findymail', created_at
    FROM leads_in
)
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, next_send_at, mailbox_id, created_at, updated_at)
SELECT sqlc.arg(campaign_id)::bigint, l.id, sqlc.arg(workspace_id)::bigint,
       CASE WHEN l.id % 50 = 0 THEN 'active'
            ELSE (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'replied', 'bounced', 'unsubscribed', 'failed'])[1 + l.id % 10] END,
       5, CASE WHEN l.id % 50 = 0 THEN now() + interval '365 days' ELSE l.created_at + interval '12 days' END,
       (sqlc.arg(mailbox_ids)::bigint[])[1 + l.id % cardinality(sqlc.arg(mailbox_ids)::bigint[])], l.created_at, l.created_at + interval '12 days'
FROM leads_in l
ORDER BY l.id;
