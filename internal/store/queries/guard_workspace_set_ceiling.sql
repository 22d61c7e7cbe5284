-- name: GuardWorkspaceSetCeiling :one
-- Set (or clear, with NULL) a workspace's monthly USD ceiling and record
-- who did it, in one statement.
-- $1 workspace name, $2 ceiling (NULL = none), $3 actor.
WITH up AS (
    UPDATE workspaces SET monthly_usd_ceiling = sqlc.arg(monthly_usd_ceiling), updated_at = now()
    WHERE name = sqlc.arg(name)::text
    RETURNING id, name, monthly_usd_ceiling
), audit AS (
    INSERT INTO audit_log (actor, action, filters, affected)
    SELECT sqlc.arg(actor)::text, 'workspace.set',
           jsonb_build_object('workspace', up.name, 'monthly_usd_ceiling', up.monthly_usd_ceiling), 1
    FROM up
)
SELECT id, name, monthly_usd_ceiling FROM up;
