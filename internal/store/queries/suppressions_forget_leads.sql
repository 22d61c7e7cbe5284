-- name: SuppressionsForgetLeads :many
-- Deletes the leads with the address (any of its spellings: canonical, as
-- given, with a Unicode domain) in one workspace, or in
-- all when workspace_id is NULL; their enrichment rows, enrollments, sends
-- and token uses go with them (ON DELETE CASCADE). Per workspace: the
-- leads and enrollments erased. A scan of leads: forgetting is a rare
-- operator action, and it must find every spelling the table holds.
WITH deleted AS (
    DELETE FROM leads l
    WHERE lower(btrim(l.email)) = ANY (sqlc.arg(emails)::text[])
      AND (sqlc.narg(workspace_id)::bigint IS NULL OR l.workspace_id = sqlc.narg(workspace_id)::bigint)
    RETURNING l.id, l.workspace_id
)
SELECT d.workspace_id, count(*)::bigint AS leads,
       (SELECT count(*) FROM enrollments e
        WHERE e.lead_id IN (SELECT dd.id FROM deleted dd WHERE dd.workspace_id = d.workspace_id))::bigint AS enrollments
FROM deleted d
GROUP BY d.workspace_id;
