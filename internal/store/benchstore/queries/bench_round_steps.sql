-- name: BenchRoundSteps :exec
-- One measured round of the email drain: n leads with an address in
-- the workspace, external ids prefixed tag, each enrolled in the campaign
-- on the mailboxes in turn, due an hour ago.
WITH leads_in AS (
    INSERT INTO leads (workspace_id, external_id, first_name, last_name, company, company_domain, email)
    SELECT sqlc.arg(workspace_id)::bigint, sqlc.arg(tag)::text || '-' || g, 'First' || g, 'Last' || g, 'Company ' || (g % 1000),
           'company' || (g % 1000) || '.example', sqlc.arg(tag)::text || '.' || g || '@company' || (g % 1000) || '.example'
    FROM generate_series(1, sqlc.arg(n)::int) g
    RETURNING id
)
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, next_send_at, mailbox_id)
SELECT sqlc.arg(campaign_id)::bigint, id, sqlc.arg(workspace_id)::bigint, now() - interval '1 hour', (sqlc.arg(mailbox_ids)::bigint[])[1 + id % cardinality(sqlc.arg(mailbox_ids)::bigint[])]
FROM leads_in
ORDER BY id;
