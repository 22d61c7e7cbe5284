-- name: UnsubscribeApply :one
-- Uses an unsubscribe token (checked by the caller): records its use, ends
-- every active enrollment of the address in the workspace (every campaign)
-- and the token's own as 'unsubscribed'; the caller suppresses the address
-- in the same transaction (store.Suppress). A token already used records
-- nothing and changes nothing (recorded = 0): the unsubscribes key
-- decides, so of two uses at once exactly one counts.
-- Enrollments are locked in id order, so requests for one address queue
-- rather than deadlock. A tick holding one keeps its lease, and its settle
-- keeps this status (email_settle.sql). The leads are found on the import's
-- dedupe index (leads_dedupe_email_idx), never by a scan.
WITH used AS (
    INSERT INTO unsubscribes (enrollment_id, workspace_id, via)
    VALUES (sqlc.arg(enrollment_id), sqlc.arg(workspace_id), sqlc.arg(via))
    ON CONFLICT (enrollment_id) DO NOTHING
    RETURNING enrollment_id
),
targets AS (
    SELECT e.id
    FROM enrollments e
    WHERE EXISTS (SELECT 1 FROM used)
      AND e.status = 'active'
      AND (e.id = sqlc.arg(enrollment_id)
           OR sqlc.arg(email)::text <> '' AND e.lead_id IN (
               SELECT l.id FROM leads l
               WHERE (l.workspace_id::text || E'\x1f' || lower(l.email))
                     = sqlc.arg(workspace_id)::bigint::text || E'\x1f' || sqlc.arg(email)::text))
    ORDER BY e.id
    FOR UPDATE OF e
),
ended AS (
    UPDATE enrollments e
    SET status = 'unsubscribed', updated_at = now()
    FROM targets t
    WHERE e.id = t.id
    RETURNING e.id
)
SELECT (SELECT count(*) FROM used) AS recorded,
       (SELECT count(*) FROM ended) AS ended;
