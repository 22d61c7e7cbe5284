INSERT INTO suppressions (workspace_id, email, reason)
SELECT u.workspace_id, lower(u.email), u.reason
FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u (workspace_id, email, reason)
ON CONFLICT (workspace_id, email) DO NOTHING
