-- name: DemoReportSends :many
-- Messages sent per mailbox, mailboxes that sent none included.
SELECT m.address, count(s.id) AS sent
FROM mailboxes m
LEFT JOIN sends s ON s.mailbox_id = m.id AND s.status = 'sent'
GROUP BY m.address;
