-- name: BenchClusterStats :one
-- What a storm could leave behind for the runs after it, read before and
-- after each run of the incident replay: each run has its own scratch
-- schema, so only what is shared can carry over — checkpoints, WAL, the
-- catalog (every scratch schema adds and drops its tables there) and
-- autovacuum's work in this database. One statement, so the counters are
-- read at one instant; through the statistics functions and
-- pg_catalog.pg_class, which sqlc can type (the pg_stat_* views and an
-- unqualified pg_class it cannot).
SELECT
    (pg_stat_get_bgwriter_timed_checkpoints() + pg_stat_get_bgwriter_requested_checkpoints())::bigint AS checkpoints,
    -- The WAL position in bytes: its growth is the WAL written.
    pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal_bytes,
    (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
       FROM pg_catalog.pg_class c
      WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r')::bigint AS catalog_bytes,
    (SELECT coalesce(sum(pg_stat_get_dead_tuples(c.oid)), 0)
       FROM pg_catalog.pg_class c
      WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind = 'r')::bigint AS catalog_dead_tuples,
    (SELECT coalesce(sum(pg_stat_get_autovacuum_count(c.oid) + pg_stat_get_autoanalyze_count(c.oid)), 0)
       FROM pg_catalog.pg_class c
      WHERE c.relkind = 'r')::bigint AS autovacuum_runs;
