-- Mailboxes by id (a follow-up may use a mailbox no longer in the campaign).
SELECT m.id, m.address, m.display_name, m.smtp_url, coalesce(m.password_env, ''), m.daily_cap, m.status,
       m.paused_until
FROM mailboxes m
WHERE m.id = ANY ($1::bigint[])
ORDER BY m.id
