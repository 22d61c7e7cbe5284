-- $1 actor, $2 action, $3 filters, $4 affected rows.
INSERT INTO audit_log (actor, action, filters, affected)
VALUES ($1::text, $2::text, $3::jsonb, $4::bigint)
