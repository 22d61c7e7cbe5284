-- name: BenchLeadsLeft :one
-- The leads an enrichment tick could still claim (the storm's backlog).
SELECT count(*) FROM lead_enrichment WHERE status IN ('pending', 'in_progress');
