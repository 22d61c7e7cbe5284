package store

import (
	"context"
	_ "embed"
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
	// Windows are the sends kept as mailboxes' bounce-rate windows
	// (PruneSendWindows); sends only.
	Windows []SendWindow
}

// SendWindow is where a mailbox's bounce-rate window begins: its sends
// from (CreatedAt, ID) on are in it.
type SendWindow struct {
	MailboxID int64
	CreatedAt time.Time
	ID        int64
}

// PruneSendWindows returns where each mailbox's window of its newest
// window sends begins; a mailbox with fewer has none (all its sends are
// in its window).
func PruneSendWindows(ctx context.Context, db DBTX, window int) ([]SendWindow, error) {
	rows, err := sqlcdb.New(db).PruneWindowStarts(ctx, int32(window))
	return convertRows(rows, err, "reading the mailboxes' bounce-rate windows", func(r sqlcdb.PruneWindowStartsRow) SendWindow {
		return SendWindow(r)
	})
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
// (queries/prune_<table>.sql, sends' under byhand/). The generated params
// and rows of the typed ones have the same fields, so they convert.
var pruneStatements = map[string]func(context.Context, DBTX, PruneArgs) (PruneBatch, error){
	"sends": pruneSends,
	"provider_calls": func(ctx context.Context, db DBTX, a PruneArgs) (PruneBatch, error) {
		r, err := sqlcdb.New(db).PruneProviderCalls(ctx, sqlcdb.PruneProviderCallsParams(a.params()))
		return PruneBatch(r), err
	},
	"events": func(ctx context.Context, db DBTX, a PruneArgs) (PruneBatch, error) {
		r, err := sqlcdb.New(db).PruneEvents(ctx, sqlcdb.PruneEventsParams(a.params()))
		return PruneBatch(r), err
	},
	"tick_runs": func(ctx context.Context, db DBTX, a PruneArgs) (PruneBatch, error) {
		r, err := sqlcdb.New(db).PruneTickRuns(ctx, sqlcdb.PruneTickRunsParams(a.params()))
		return PruneBatch(r), err
	},
	"audit_log": func(ctx context.Context, db DBTX, a PruneArgs) (PruneBatch, error) {
		r, err := sqlcdb.New(db).PruneAuditLog(ctx, sqlcdb.PruneAuditLogParams(a.params()))
		return PruneBatch(r), err
	},
	"enrollments": func(ctx context.Context, db DBTX, a PruneArgs) (PruneBatch, error) {
		r, err := sqlcdb.New(db).PruneEnrollments(ctx, sqlcdb.PruneEnrollmentsParams(a.params()))
		return PruneBatch(r), err
	},
}

// params are a's fields every typed prune statement takes.
func (a PruneArgs) params() sqlcdb.PruneAuditLogParams {
	return sqlcdb.PruneAuditLogParams{After: a.After, Batch: a.Batch, Cutoff: a.Cutoff, DryRun: a.DryRun}
}

//go:embed queries/byhand/prune_sends.sql
var pruneSendsSQL string

// pruneSendsParams are prune_sends.sql's parameters: the batch every prune
// statement takes, then the bounce-rate windows to keep, one array per
// field of SendWindow.
type pruneSendsParams struct {
	After            int64       `db:"after"`
	Batch            int32       `db:"batch"`
	Cutoff           time.Time   `db:"cutoff"`
	DryRun           bool        `db:"dry_run"`
	WindowMailboxIDs []int64     `db:"window_mailbox_ids"`
	WindowCreatedAt  []time.Time `db:"window_created_at"`
	WindowIDs        []int64     `db:"window_ids"`
}

var pruneSendsStmt = byName[pruneSendsParams](pruneSendsSQL)

func pruneSends(ctx context.Context, db DBTX, a PruneArgs) (PruneBatch, error) {
	n := len(a.Windows)
	p := pruneSendsParams{After: a.After, Batch: a.Batch, Cutoff: a.Cutoff, DryRun: a.DryRun,
		WindowMailboxIDs: make([]int64, n), WindowCreatedAt: make([]time.Time, n), WindowIDs: make([]int64, n)}
	for i, w := range a.Windows {
		p.WindowMailboxIDs[i], p.WindowCreatedAt[i], p.WindowIDs[i] = w.MailboxID, w.CreatedAt, w.ID
	}
	var b PruneBatch
	err := db.QueryRow(ctx, pruneSendsStmt.sql, pruneSendsStmt.args(p)...).
		Scan(&b.LastID, &b.Scanned, &b.Matched, &b.Deleted, &b.Done)
	return b, err
}

// Prune runs one batch of table's rule as one statement: its own short
// transaction on a pool, whose row locks (on the rows it deletes, taken
// with SKIP LOCKED) last only as long as the statement.
func Prune(ctx context.Context, db DBTX, table string, a PruneArgs) (PruneBatch, error) {
	run, ok := pruneStatements[table]
	if !ok {
		return PruneBatch{}, fmt.Errorf("prune: no rule for table %q", table)
	}
	b, err := run(ctx, db, a)
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
