-- Merges the staged batch into workspace @workspace_id in one statement:
--   * a line with an external_id upserts by (workspace, external_id);
--   * a line without one is the lead with its address (lower-cased) or,
--     without an address, its name at its company's domain: when the
--     workspace has that lead (from an earlier import or batch) the line is
--     merged into it, never a second lead; lines of one batch with the same
--     address or name are one lead, the last line's values winning;
--   * a re-import without an email keeps an address already found;
--   * a lead without an email gets a pending enrichment row (once);
--   * a lead that now has an email closes its waiting enrichment row, unless
--     a tick holds it (that tick's record keeps the imported address).
-- Returns inserted, updated (same external_id), merged (duplicate lines
-- without external_id), queued and closed counts.
WITH keyed AS (
    SELECT i.*,
           CASE WHEN i.external_id IS NOT NULL THEN NULL
                WHEN i.email IS NOT NULL THEN 'e:' || i.email
                ELSE 'n:' || i.company_domain || chr(31) || lower(i.first_name) || chr(31) || lower(i.last_name)
           END AS dedupe_key
    FROM lead_import i
),
latest AS (
    SELECT k.*,
           count(*) OVER (PARTITION BY k.dedupe_key) AS copies,
           row_number() OVER (PARTITION BY k.dedupe_key ORDER BY k.line DESC) AS newest
    FROM keyed k
),
batch AS (
    SELECT b.*,
           CASE WHEN b.dedupe_key IS NULL THEN NULL
                WHEN b.email IS NOT NULL THEN
                    -- the keys of leads_dedupe_email_idx and _name_idx (00008)
                    (SELECT min(x.id) FROM leads x
                     WHERE x.workspace_id::text || E'\x1f' || lower(x.email) = @workspace_id::bigint::text || E'\x1f' || b.email)
                ELSE
                    (SELECT min(x.id) FROM leads x
                     WHERE x.external_id IS NULL
                       AND x.workspace_id::text || E'\x1f' || x.company_domain || E'\x1f' || lower(x.first_name) || E'\x1f' || lower(x.last_name)
                         = @workspace_id::bigint::text || E'\x1f' || b.company_domain || E'\x1f' || lower(b.first_name) || E'\x1f' || lower(b.last_name))
           END AS existing_id
    FROM latest b
    WHERE b.dedupe_key IS NULL OR b.newest = 1
),
merged AS (
    UPDATE leads x SET
        first_name     = b.first_name,
        last_name      = b.last_name,
        company        = b.company,
        company_domain = b.company_domain,
        email          = coalesce(b.email, x.email),
        email_source   = CASE WHEN b.email IS NOT NULL THEN 'import' ELSE x.email_source END,
        timezone       = b.timezone,
        updated_at     = now()
    FROM batch b
    WHERE b.existing_id = x.id
    RETURNING x.id, x.email
),
up AS (
    INSERT INTO leads AS l (workspace_id, external_id, first_name, last_name, company, company_domain, email, email_source, timezone)
    SELECT @workspace_id, external_id, first_name, last_name, company, company_domain, email,
           CASE WHEN email IS NOT NULL THEN 'import' END, timezone
    FROM batch
    WHERE existing_id IS NULL
    ON CONFLICT (workspace_id, external_id) DO UPDATE SET
        first_name     = EXCLUDED.first_name,
        last_name      = EXCLUDED.last_name,
        company        = EXCLUDED.company,
        company_domain = EXCLUDED.company_domain,
        email          = coalesce(EXCLUDED.email, l.email),
        email_source   = CASE WHEN EXCLUDED.email IS NOT NULL THEN 'import' ELSE l.email_source END,
        timezone       = EXCLUDED.timezone,
        updated_at     = now()
    RETURNING l.id, l.email, (xmax = 0) AS inserted
),
touched AS (
    SELECT id, email FROM up
    UNION ALL
    SELECT id, email FROM merged
),
queued AS (
    INSERT INTO lead_enrichment (lead_id, workspace_id)
    SELECT id, @workspace_id FROM touched WHERE email IS NULL
    ON CONFLICT (lead_id) DO NOTHING
    RETURNING lead_id
),
closed AS (
    UPDATE lead_enrichment e
    SET status = 'enriched', provider = 'import', next_attempt_at = now(),
        negative_cache_until = NULL, last_error = NULL, updated_at = now()
    FROM touched t
    WHERE e.lead_id = t.id AND t.email IS NOT NULL
      AND e.status IN ('pending', 'unreachable', 'not_found', 'enrichment_failed')
    RETURNING e.lead_id
)
SELECT (SELECT count(*) FROM up WHERE inserted),
       (SELECT count(*) FROM up WHERE NOT inserted),
       (SELECT count(*) FROM batch WHERE existing_id IS NOT NULL)
         + (SELECT coalesce(sum(copies - 1), 0)::bigint FROM batch WHERE dedupe_key IS NOT NULL),
       (SELECT count(*) FROM queued),
       (SELECT count(*) FROM closed);
