-- name: SuppressionsForgetRecipients :many
-- Deletes the address (any of its spellings) from campaign_recipients (the "this
-- campaign mailed it" record), in one workspace or all; one row back per
-- row deleted, with its workspace.
WITH deleted AS (
    DELETE FROM campaign_recipients r
    WHERE r.email = ANY (sqlc.arg(emails)::text[])
      AND r.campaign_id IN (SELECT c.id FROM campaigns c
                            WHERE sqlc.narg(workspace_id)::bigint IS NULL OR c.workspace_id = sqlc.narg(workspace_id)::bigint)
    RETURNING r.campaign_id
)
SELECT c.workspace_id FROM deleted d JOIN campaigns c ON c.id = d.campaign_id;
