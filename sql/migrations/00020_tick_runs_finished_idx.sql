-- Two of the runs prune keeps per kind (status and doctor report them)
-- had no index to find them, so every prune batch read a kind's runs to
-- find them and pruning a long tick_runs history went at about 1,000
-- rows/s (TestPruneTickRunsBatchReadsNotTheTable):
--   * the newest success by finish: a sort of all the kind's successes;
--   * the newest failure: a walk of all the kind's runs when it never
--     failed (a healthy kind). Failures are few, so the index is small.
--     `status` looks it up too (ops_ticks.sql): with a year of email runs
--     that walk made `status --overdue` take 1–2 s
--     (TestOverdueReportReadsNoTickHistory).

-- +goose Up
CREATE INDEX tick_runs_kind_finished_idx ON tick_runs (kind, finished_at) WHERE exit_status = 0;
CREATE INDEX tick_runs_kind_failed_idx ON tick_runs (kind, started_at) WHERE exit_status <> 0;

-- +goose Down
DROP INDEX tick_runs_kind_finished_idx, tick_runs_kind_failed_idx;
