-- name: AuditInsert :one
-- One operator action in the audit log.
INSERT INTO audit_log (actor, action, filters, affected)
VALUES (sqlc.arg(actor), sqlc.arg(action), sqlc.arg(filters), sqlc.arg(affected))
RETURNING id;
