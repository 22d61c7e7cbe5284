-- name: EmailMailboxesGet :many
-- Mailboxes by id (a follow-up may use a mailbox no longer in the campaign).
SELECT m.id, m.address, m.display_name, m.smtp_url, coalesce(m.password_env, ''), m.daily_cap, m.status,
       m.paused_until, coalesce(m.imap_url, ''), m.ramp_start, m.ramp_step, m.ramp_every, m.ramp_max,
       m.gap_min, m.gap_max, m.cap_today, m.verp, m.verp_secret, coalesce(m.helo, '') AS helo, coalesce(m.tls_ca, '') AS tls_ca,
       m.auth
FROM mailboxes m
WHERE m.id = ANY (sqlc.arg(ids)::bigint[])
ORDER BY m.id;
