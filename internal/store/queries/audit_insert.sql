-- name: AuditInsert :one
-- One operator action in the audit log.
INSERT INTO audit_log (actor, action, filters, affected)
VALUES ($1, $2, $3, $4)
RETURNING id;
