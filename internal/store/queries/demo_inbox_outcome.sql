-- name: DemoInboxOutcome :one
-- What the inbox tick made of a reply and a bounce, by lead address.
SELECT (SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = $1) AS reply_status,
       (SELECT e.status FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = $2) AS bounce_status,
       EXISTS (SELECT 1 FROM suppressions WHERE email_sha256 = address_sha256($2)) AS suppressed;
