-- Adds a batch of suppressions to workspace $1: addresses ($2, canonical;
-- NULL for a row that has only its hash $3), reasons $4 and times $5 (NULL:
-- now). An address already on the list keeps its row; an address whose
-- person was forgotten keeps only its hash (no address is stored again).
-- Returns how many rows were added.
WITH rows AS (
    SELECT * FROM unnest($2::text[], $3::bytea[], $4::text[], $5::timestamptz[])
        AS u (email, email_sha256, reason, created_at)
),
plain AS (
    INSERT INTO suppressions (workspace_id, email, reason, created_at)
    SELECT $1, r.email, r.reason, coalesce(r.created_at, now())
    FROM rows r
    WHERE r.email IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM suppressions f
                      WHERE f.workspace_id = $1 AND f.email IS NULL AND f.email_sha256 = address_sha256(r.email))
    ON CONFLICT DO NOTHING
    RETURNING 1
),
hashed AS (
    INSERT INTO suppressions (workspace_id, email, email_sha256, reason, created_at)
    SELECT $1, NULL, r.email_sha256, r.reason, coalesce(r.created_at, now())
    FROM rows r
    WHERE r.email IS NULL
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM plain) + (SELECT count(*) FROM hashed);
