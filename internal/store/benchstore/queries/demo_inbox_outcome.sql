-- name: DemoInboxOutcome :one
-- What the inbox tick made of a reply and a bounce, by lead address.
SELECT (SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = sqlc.arg(reply_email)::text) AS reply_status,
       (SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = sqlc.arg(bounce_email)::text) AS bounce_status,
       EXISTS (SELECT 1 FROM suppressions WHERE email_sha256 = address_sha256(sqlc.arg(bounce_email)::text)) AS suppressed;
