-- Empties the staging table for the next batch.
TRUNCATE lead_import;
