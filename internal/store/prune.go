package store

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// PruneArgs is one prune batch's input: the walk's position (the last key
// of the previous batch, 0 to start), how many rows to look at, the
// instant before which a row may go, and whether to only count.
type PruneArgs struct {
	After  int64
	Batch  int32
	Cutoff time.Time
	DryRun bool
}

// PruneBatch is what one prune batch did: the last key it looked at (the
// next batch's After), the rows it looked at, those its table's rule
// matched, those it deleted (fewer than matched when another transaction
// held some, or in a dry run) and whether the walk is done (end of table,
// or a row too young to go).
type PruneBatch struct {
	LastID  int64
	Scanned int64
	Matched int64
	Deleted int64
	Done    bool
}

// pruneStatements run one batch per table; each table's rule is its query
// (queries/prune_<table>.sql). The generated params and rows of the six
// queries have the same fields, so they convert one into the other.
var pruneStatements = map[string]func(context.Context, *sqlcdb.Queries, sqlcdb.PruneSendsParams) (PruneBatch, error){
	"sends": func(ctx context.Context, q *sqlcdb.Queries, a sqlcdb.PruneSendsParams) (PruneBatch, error) {
		r, err := q.PruneSends(ctx, a)
		return PruneBatch(r), err
	},
	"provider_calls": func(ctx context.Context, q *sqlcdb.Queries, a sqlcdb.PruneSendsParams) (PruneBatch, error) {
		r, err := q.PruneProviderCalls(ctx, sqlcdb.PruneProviderCallsParams(a))
		return PruneBatch(r), err
	},
	"events": func(ctx context.Context, q *sqlcdb.Queries, a sqlcdb.PruneSendsParams) (PruneBatch, error) {
		r, err := q.PruneEvents(ctx, sqlcdb.PruneEventsParams(a))
		return PruneBatch(r), err
	},
	"tick_runs": func(ctx context.Context, q *sqlcdb.Queries, a sqlcdb.PruneSendsParams) (PruneBatch, error) {
		r, err := q.PruneTickRuns(ctx, sqlcdb.PruneTickRunsParams(a))
		return PruneBatch(r), err
	},
	"audit_log": func(ctx context.Context, q *sqlcdb.Queries, a sqlcdb.PruneSendsParams) (PruneBatch, error) {
		r, err := q.PruneAuditLog(ctx, sqlcdb.PruneAuditLogParams(a))
		return PruneBatch(r), err
	},
	"enrollments": func(ctx context.Context, q *sqlcdb.Queries, a sqlcdb.PruneSendsParams) (PruneBatch, error) {
		r, err := q.PruneEnrollments(ctx, sqlcdb.PruneEnrollmentsParams(a))
		return PruneBatch(r), err
	},
}

// Prune runs one batch of table's rule as one statement: its own short
// transaction on a pool, whose row locks (on the rows it deletes, taken
// with SKIP LOCKED) last only as long as the statement.
func Prune(ctx context.Context, db DBTX, table string, a PruneArgs) (PruneBatch, error) {
	run, ok := pruneStatements[table]
	if !ok {
		return PruneBatch{}, fmt.Errorf("prune: no rule for table %q", table)
	}
	b, err := run(ctx, sqlcdb.New(db), sqlcdb.PruneSendsParams{After: a.After, Batch: a.Batch, Cutoff: a.Cutoff, DryRun: a.DryRun})
	if err != nil {
		return b, fmt.Errorf("pruning %s: %w", table, err)
	}
	return b, nil
}

// DBNow is the database's clock.
func DBNow(ctx context.Context, db DBTX) (time.Time, error) {
	now, err := sqlcdb.New(db).DBNow(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the database's clock: %w", err)
	}
	return now, nil
}
