-- Creates or updates a workspace mailbox by address. Pause and disable state
-- is left alone: re-importing a file does not un-pause a limited mailbox.
INSERT INTO mailboxes (workspace_id, address, display_name, smtp_url, password_env, daily_cap)
VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6)
ON CONFLICT (workspace_id, address) DO UPDATE
SET display_name = EXCLUDED.display_name,
    smtp_url     = EXCLUDED.smtp_url,
    password_env = EXCLUDED.password_env,
    daily_cap    = EXCLUDED.daily_cap,
    updated_at   = now()
RETURNING id
