-- Removes from the staged batch every line whose external_id an earlier
-- line of this import used (an earlier batch: lead_import_seen; this batch:
-- a lower line), returns each with the line that used it first, and records
-- the batch's first uses for the batches to come. lead_import_seen is looked
-- up per external_id (its primary key): a temp table has no statistics, and
-- a join could scan all of it for every batch.
WITH firsts AS (
    SELECT DISTINCT ON (external_id) external_id, line
    FROM lead_import
    WHERE external_id IS NOT NULL
    ORDER BY external_id, line
),
known AS (
    SELECT f.external_id,
           coalesce((SELECT s.line FROM lead_import_seen s WHERE s.external_id = f.external_id), f.line) AS first_line
    FROM firsts f
),
repeats AS (
    DELETE FROM lead_import i
    USING known k
    WHERE i.external_id = k.external_id AND i.line <> k.first_line
    RETURNING i.line, i.external_id, k.first_line
),
recorded AS (
    INSERT INTO lead_import_seen (external_id, line)
    SELECT external_id, line FROM firsts
    ON CONFLICT (external_id) DO NOTHING
)
SELECT line, external_id, first_line FROM repeats ORDER BY line;
