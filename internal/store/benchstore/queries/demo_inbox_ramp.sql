-- name: DemoInboxRamp :one
-- A ramping mailbox's cap today and how many enrollments it carries.
SELECT m.cap_today, (SELECT count(*) FROM enrollments e WHERE e.mailbox_id = m.id) AS enrollments
FROM mailboxes m
WHERE m.address = sqlc.arg(address);
