-- name: UnsubscribeTarget :one
-- What a token names: the enrollment's workspace and its key (to check the
-- token's MAC), the lead's address as stored (canonical), and whether the token was
-- used already.
SELECT e.workspace_id, k.key, coalesce(lower(btrim(l.email)), '')::text AS email,
       EXISTS (SELECT 1 FROM unsubscribes u WHERE u.enrollment_id = e.id) AS used
FROM enrollments e
JOIN leads l ON l.id = e.lead_id
JOIN unsubscribe_keys k ON k.workspace_id = e.workspace_id
WHERE e.id = sqlc.arg(enrollment_id);
