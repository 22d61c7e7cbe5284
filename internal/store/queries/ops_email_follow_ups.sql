-- name: OpsEmailFollowUps :many
-- The follow-ups that take a capped mailbox's room before its overdue
-- backlog, for the drain estimate: active enrollments of campaigns with
-- follow_ups_first, bound to a mailbox with a cap in force. Future rows
-- (their step not yet due, before now + horizon) of step 2 or later, by
-- the hour they come due (rounded up); and the overdue rows of any step,
-- at now, whose next steps come due as they are sent. Each group carries
-- the delays of the steps after its own, in order.
SELECT g.mailbox_id, g.at::timestamptz AS at, g.overdue, g.n::bigint AS n,
       ARRAY(SELECT s.delay_seconds::bigint FROM sequence_steps s
             WHERE s.campaign_id = g.campaign_id AND s.step > g.current_step
             ORDER BY s.step)::bigint[] AS delays
FROM (
    SELECT e.mailbox_id, e.campaign_id, e.current_step,
           e.step_due_at <= sqlc.arg(now)::timestamptz AS overdue,
           CASE WHEN e.step_due_at <= sqlc.arg(now)::timestamptz THEN sqlc.arg(now)::timestamptz
                ELSE date_trunc('hour', e.next_send_at - interval '1 microsecond') + interval '1 hour' END AS at,
           count(*) AS n
    FROM enrollments e
    JOIN campaigns c ON c.id = e.campaign_id
    JOIN mailboxes m ON m.id = e.mailbox_id
    WHERE e.status = 'active' AND c.status = 'active' AND c.follow_ups_first AND m.cap_today > 0
      AND e.next_send_at < sqlc.arg(horizon)::timestamptz
      AND (e.step_due_at <= sqlc.arg(now)::timestamptz OR e.current_step > 1)
      AND (sqlc.narg(workspace_id)::bigint IS NULL OR e.workspace_id = sqlc.narg(workspace_id))
      AND (sqlc.narg(campaign_id)::bigint IS NULL OR e.campaign_id = sqlc.narg(campaign_id))
    GROUP BY 1, 2, 3, 4, 5
) g
ORDER BY g.mailbox_id, g.at;
