-- name: BenchWaitSample :many
-- What the other active backends of this database wait for right now:
-- the width benchmark samples it to tell lock waits (wait_event_type
-- 'Lock': a row, a transaction, a relation) from work.
SELECT coalesce(wait_event_type, 'CPU')::text AS wait_type, coalesce(wait_event, '')::text AS wait_event, count(*) AS backends
FROM pg_catalog.pg_stat_activity
WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
GROUP BY 1, 2;
