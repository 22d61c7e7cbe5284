-- name: OpsEmailDue :many
-- Due active enrollments (at now) grouped by what decides whether they can
-- go out: campaign, mailbox, whether the lead has an address, and the lead's
-- zone (only for campaigns that send in each lead's own zone). The groups are
-- few; the sending window is judged per group in Go. Due and late are
-- measured from step_due_at, when the current step first became due: a
-- lease or a retry moves next_send_at, never that, so leased rows and rows
-- backing off after a refused send count as long as their step is unsent;
-- the drain estimate counts those from when their backoff ends.
SELECT e.campaign_id, e.mailbox_id,
       coalesce(l.email, '') = '' AS no_email,
       CASE WHEN c.window_timezone = 'lead' THEN coalesce(l.timezone, '') ELSE '' END AS lead_tz,
       -- When the row may go: now for rows due or under a tick's lease
       -- (being sent); for rows backing off after a refused send, when
       -- their backoff ends, rounded up to the second (so the rows of one
       -- tick's refusals make a few groups).
       (CASE WHEN e.next_send_at <= sqlc.arg(now)::timestamptz OR e.locked_until > sqlc.arg(now)::timestamptz
             THEN sqlc.arg(now)::timestamptz
             ELSE date_trunc('second', e.next_send_at - interval '1 microsecond') + interval '1 second' END)::timestamptz AS waits_until,
       count(*) AS n,
       min(e.step_due_at)::timestamptz AS oldest
FROM enrollments e
JOIN campaigns c ON c.id = e.campaign_id
JOIN leads l ON l.id = e.lead_id
WHERE e.status = 'active'
  AND e.step_due_at <= sqlc.arg(now)::timestamptz
  AND (sqlc.narg(workspace_id)::bigint IS NULL OR e.workspace_id = sqlc.narg(workspace_id))
  AND (sqlc.narg(campaign_id)::bigint IS NULL OR e.campaign_id = sqlc.narg(campaign_id))
GROUP BY 1, 2, 3, 4, 5;
