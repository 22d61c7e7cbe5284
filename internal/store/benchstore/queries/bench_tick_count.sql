-- name: BenchTickCount :one
-- Ticks run (their tick_runs rows).
SELECT count(*) FROM tick_runs;
