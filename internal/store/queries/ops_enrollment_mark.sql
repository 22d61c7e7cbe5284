-- name: OpsEnrollmentMark :one
-- Ends sequences because a lead replied, unsubscribed or bounced (status), for
-- the enrollments ids. Only active enrollments change; a tick that holds one
-- keeps its lease, and its settle keeps this status (email_settle.sql), so
-- the reply wins over the send in flight. A non-empty suppress (unsubscribed, a
-- hard bounce) also suppresses the lead's address in its workspace (every
-- campaign) with that reason, whatever state the enrollment was in.
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
),
suppressed AS (
    INSERT INTO suppressions (workspace_id, email, reason)
    SELECT DISTINCT t.workspace_id, t.email, sqlc.arg(suppress)::text
    FROM target t
    WHERE sqlc.arg(suppress)::text <> '' AND t.email IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM target) AS found,
       (SELECT count(*) FROM marked) AS marked,
       (SELECT count(*) FROM suppressed) AS suppressed;
