-- Applies tick outcomes to enrollments the tick $1 still holds and releases
-- them. A mailbox of 0 keeps the current one (it may have been rebound).
UPDATE enrollments e
SET status       = u.status,
    current_step = u.current_step,
    next_send_at = u.next_send_at,
    mailbox_id   = coalesce(NULLIF(u.mailbox_id, 0), e.mailbox_id),
    attempts     = u.attempts,
    last_error   = NULLIF(u.last_error, ''),
    locked_until = NULL,
    locked_by    = NULL,
    updated_at   = now()
FROM unnest($2::bigint[], $3::text[], $4::int[], $5::timestamptz[], $6::bigint[], $7::int[], $8::text[])
    AS u (id, status, current_step, next_send_at, mailbox_id, attempts, last_error)
WHERE e.id = u.id AND e.locked_by = $1
