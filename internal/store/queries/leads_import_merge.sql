-- Merges the staged leads into workspace $1 in one statement:
--   * upsert by (workspace, external_id); rows without external_id are new;
--   * a re-import without an email keeps an address already found;
--   * a lead without an email gets a pending enrichment row (once);
--   * a lead that now has an email closes its waiting enrichment row, unless
--     a tick holds it (that tick's record keeps the imported address).
WITH up AS (
    INSERT INTO leads AS l (workspace_id, external_id, first_name, last_name, company, company_domain, email, email_source, timezone)
    SELECT $1, external_id, first_name, last_name, company, company_domain, email,
           CASE WHEN email IS NOT NULL THEN 'import' END, timezone
    FROM lead_import
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
queued AS (
    INSERT INTO lead_enrichment (lead_id, workspace_id)
    SELECT id, $1 FROM up WHERE email IS NULL
    ON CONFLICT (lead_id) DO NOTHING
    RETURNING lead_id
),
closed AS (
    UPDATE lead_enrichment e
    SET status = 'enriched', provider = 'import', next_attempt_at = now(),
        negative_cache_until = NULL, last_error = NULL, updated_at = now()
    FROM up
    WHERE e.lead_id = up.id AND up.email IS NOT NULL
      AND e.status IN ('pending', 'unreachable', 'not_found', 'enrichment_failed')
    RETURNING e.lead_id
)
SELECT (SELECT count(*) FROM up WHERE inserted),
       (SELECT count(*) FROM up WHERE NOT inserted),
       (SELECT count(*) FROM queued),
       (SELECT count(*) FROM closed)
