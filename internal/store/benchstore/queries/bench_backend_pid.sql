-- name: BenchBackendPid :one
-- The server process serving this connection: its parent is the
-- postmaster whose CPU time the benchmark reads.
SELECT pg_backend_pid()::int AS pid;
