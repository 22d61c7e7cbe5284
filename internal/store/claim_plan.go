package store

import "github.com/jackc/pgx/v5"

// claimExecMode runs the claim statements unprepared, so Postgres plans
// each run for its actual parameters. pgx otherwise caches a prepared
// statement, and after five runs Postgres may switch it to a generic plan:
// for a claim (LIMIT $1, an optional workspace filter) that plan reads and
// hashes the whole queue instead of walking the partial claim index, 18 ms
// instead of 1 ms at 50k due rows (EXPLAIN ANALYZE), worse as the backlog
// grows. Only the claims need this; every other statement keeps its cached
// plan, which matters for the per-call guard statements.
const claimExecMode = pgx.QueryExecModeExec
