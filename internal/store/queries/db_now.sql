-- name: DBNow :one
-- The database's clock: what a run that records no tick_runs row (a dry
-- run) counts back from, as the ticks do from their start.
SELECT now()::timestamptz AS now;
