-- name: OpsEnrollmentMark :many
-- Ends sequences because a lead replied, unsubscribed or bounced (status), for
-- the enrollments ids. Only active enrollments change; a tick that holds one
-- keeps its lease, and its settle keeps this status (email_settle.sql), so
-- the reply wins over the send in flight. Returns every enrollment found
-- with its workspace, its lead's address and whether it changed, so the
-- caller can suppress the addresses (store.Suppress) whatever state the
-- enrollments were in.
WITH target AS (
    SELECT e.id, e.workspace_id, e.status, l.email
    FROM enrollments e
    JOIN leads l ON l.id = e.lead_id
    WHERE e.id = ANY (sqlc.arg(ids)::bigint[])
),
marked AS (
    UPDATE enrollments e
    SET status = sqlc.arg(status)::text, updated_at = now()
    FROM target t
    WHERE e.id = t.id AND t.status = 'active'
    RETURNING e.id
)
SELECT t.id, t.workspace_id, coalesce(t.email, '')::text AS email, (m.id IS NOT NULL)::boolean AS marked
FROM target t
LEFT JOIN marked m ON m.id = t.id
ORDER BY t.id;
