-- The external_ids earlier batches of this import used, with their line,
-- so a repeat in a later batch is caught; dropped at commit.
CREATE TEMP TABLE lead_import_seen (
    external_id text PRIMARY KEY,
    line        integer NOT NULL
) ON COMMIT DROP;
