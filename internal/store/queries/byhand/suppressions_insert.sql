-- Adds suppressions, one per element of the arrays: workspaces @workspace_ids,
-- addresses @emails (canonical; NULL for a forgotten person's row, which has
-- only its hash @hashes), reasons @reasons and times @created_at (NULL: now). The one writer of
-- suppressions outside the email tick's settle (store.Suppress): hard
-- bounces and stop replies read by the inbox, `enrollment mark`,
-- unsubscribe tokens, `suppressions import` and `lead forget`. Postgres
-- hashes an address itself (the suppressions_sha256 trigger, migration
-- 00015). An address already listed keeps its row, and a forgotten one
-- keeps only its hash: its address is not stored again. Returns how many
-- rows were added.
WITH rows AS (
    SELECT * FROM unnest(@workspace_ids::bigint[], @emails::text[], @hashes::bytea[], @reasons::text[], @created_at::timestamptz[])
        AS u (workspace_id, email, email_sha256, reason, created_at)
),
plain AS (
    INSERT INTO suppressions (workspace_id, email, reason, created_at)
    SELECT r.workspace_id, r.email, r.reason, coalesce(r.created_at, now())
    FROM rows r
    WHERE btrim(r.email) <> ''
      AND NOT EXISTS (SELECT 1 FROM suppressions f
                      WHERE f.workspace_id = r.workspace_id AND f.email IS NULL AND f.email_sha256 = address_sha256(r.email))
    ON CONFLICT DO NOTHING
    RETURNING 1
),
hashed AS (
    INSERT INTO suppressions (workspace_id, email, email_sha256, reason, created_at)
    SELECT r.workspace_id, NULL, r.email_sha256, r.reason, coalesce(r.created_at, now())
    FROM rows r
    WHERE r.email IS NULL AND r.email_sha256 IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM plain) + (SELECT count(*) FROM hashed);
