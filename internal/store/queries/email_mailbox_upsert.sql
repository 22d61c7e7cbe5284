-- name: EmailMailboxUpsert :one
-- Creates or updates a workspace mailbox by address. Pause and disable state
-- is left alone: re-importing a file does not un-pause a limited mailbox.
-- The VERP secret is made once, with the row, and never changes: return
-- paths already out keep verifying.
-- A ramp starts (level 0, first growth one period away) when the mailbox
-- first gets one; re-importing the same ramp keeps its progress.
INSERT INTO mailboxes (workspace_id, address, display_name, smtp_url, password_env, daily_cap,
                       imap_url, ramp_start, ramp_step, ramp_every, ramp_max, ramp_next_at, gap_min, gap_max, verp,
                       helo, tls_ca, auth)
VALUES (sqlc.arg(workspace_id), sqlc.arg(address), sqlc.arg(display_name), sqlc.arg(smtp_url), NULLIF(sqlc.arg(password_env)::text, ''), sqlc.arg(daily_cap),
        NULLIF(sqlc.arg(imap_url)::text, ''), sqlc.arg(ramp_start), sqlc.arg(ramp_step), sqlc.arg(ramp_every)::interval, sqlc.arg(ramp_max),
        CASE WHEN sqlc.arg(ramp_start) > 0 THEN now() + sqlc.arg(ramp_every)::interval END, sqlc.arg(gap_min)::interval, sqlc.arg(gap_max)::interval, sqlc.arg(verp),
        NULLIF(sqlc.arg(helo)::text, ''), NULLIF(sqlc.arg(tls_ca)::text, ''), sqlc.narg(auth)::jsonb)
ON CONFLICT (workspace_id, address) DO UPDATE
SET display_name = EXCLUDED.display_name,
    smtp_url     = EXCLUDED.smtp_url,
    password_env = EXCLUDED.password_env,
    daily_cap    = EXCLUDED.daily_cap,
    imap_url     = EXCLUDED.imap_url,
    ramp_start   = EXCLUDED.ramp_start,
    ramp_step    = EXCLUDED.ramp_step,
    ramp_every   = EXCLUDED.ramp_every,
    ramp_max     = EXCLUDED.ramp_max,
    ramp_level   = CASE WHEN mailboxes.ramp_start = 0 THEN 0 ELSE mailboxes.ramp_level END,
    ramp_next_at = CASE WHEN EXCLUDED.ramp_start = 0 THEN NULL
                        WHEN mailboxes.ramp_start = 0 THEN EXCLUDED.ramp_next_at
                        ELSE mailboxes.ramp_next_at END,
    gap_min      = EXCLUDED.gap_min,
    gap_max      = EXCLUDED.gap_max,
    verp         = EXCLUDED.verp,
    helo         = EXCLUDED.helo,
    tls_ca       = EXCLUDED.tls_ca,
    auth         = EXCLUDED.auth,
    updated_at   = now()
RETURNING id;
