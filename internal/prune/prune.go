package prune

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

// BatchDefault rows are looked at per statement: each statement is its
// own transaction holding row locks only on what it deletes, for a few
// milliseconds.
const BatchDefault = 1000

// Options tunes Run.
type Options struct {
	// Keeps overrides the rules' defaults per table.
	Keeps Keeps
	// Batch rows are looked at per statement; 0 takes BatchDefault.
	Batch int
	// Now is the instant the keeps count back from: the tick's start on
	// the database's clock, so a host's skewed clock cannot cut into
	// what caps read. Required.
	Now time.Time
	// StopAt: no batch starts at or after it (the tick's --max-duration);
	// the zero time means no bound.
	StopAt time.Time
	// Clock tells the time StopAt is checked against; nil is time.Now.
	Clock func() time.Time
	// DryRun counts what would go and deletes nothing.
	DryRun bool
	// BounceWindow sends of each mailbox, its newest that reached a
	// server, stay whatever their age: the bounce-rate guard reads them.
	// 0 takes sequence.BounceWindow.
	BounceWindow int
}

// TableReport is what a run did to one table.
type TableReport struct {
	Table Table  `json:"table"`
	Keep  string `json:"keep"`
	// Cutoff: rows older than this may go; nil when the table is kept.
	Cutoff *time.Time `json:"cutoff,omitempty"`
	// Scanned rows were looked at; Deleted went (in a dry run: would go);
	// Skipped matched the rule but another transaction held them.
	Scanned int64 `json:"scanned"`
	Deleted int64 `json:"deleted"`
	Skipped int64 `json:"skipped"`
	Batches int   `json:"batches"`
	// Done: every row older than the cutoff was looked at.
	Done bool `json:"done"`
}

// Report is what one run did.
type Report struct {
	DryRun bool          `json:"dry_run"`
	Tables []TableReport `json:"tables"`
	// Deleted sums the tables' Deleted.
	Deleted int64 `json:"deleted"`
	// Stopped: StopAt came before every table was done; the next run
	// carries on.
	Stopped bool `json:"stopped"`
}

// Run walks each prunable table in key order, one batch at a time, taking
// the tables in turn so a bound cuts every table's walk short rather than
// starving the last one, until each is done or StopAt comes. Every batch
// is one statement on db (a pool: its own transaction), so no lock
// outlives it. A cancelled ctx stops between batches with what was done.
func Run(ctx context.Context, db store.DBTX, opts Options) (Report, error) {
	if opts.Now.IsZero() {
		return Report{}, errors.New("prune: no start time to count the keeps back from")
	}
	tick.Defaults(&opts, Options{Batch: BatchDefault, Clock: time.Now, BounceWindow: sequence.BounceWindow})
	rep := Report{DryRun: opts.DryRun}
	walks, err := plan(ctx, db, opts, &rep)
	if err != nil {
		return rep, err
	}
	for len(walks) > 0 {
		next := walks[:0]
		for _, w := range walks {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if !opts.StopAt.IsZero() && !opts.Clock().Before(opts.StopAt) {
				rep.Stopped = true
				return rep, nil
			}
			tr := &rep.Tables[w.i]
			b, err := store.Prune(ctx, db, string(tr.Table), store.PruneArgs{
				After: w.after, Batch: int32(opts.Batch), Cutoff: w.cutoff, DryRun: opts.DryRun, Windows: w.windows,
			})
			if err != nil {
				return rep, fmt.Errorf("%w (after %s of %s deleted this run)", err, countOf(tr.Deleted), tr.Table)
			}
			w.after = b.LastID
			tr.add(b, opts.DryRun)
			rep.Deleted = sumDeleted(rep.Tables)
			if !tr.Done {
				next = append(next, w)
			}
		}
		walks = next
	}
	return rep, nil
}

// walk is one table's walk in key order.
type walk struct {
	i       int // into Report.Tables
	after   int64
	cutoff  time.Time
	windows []store.SendWindow
}

// plan puts every rule's table in rep, and a walk for each table with a
// cutoff (a kept table has none); the sends' walk knows each mailbox's
// bounce window, which stays.
func plan(ctx context.Context, db store.DBTX, opts Options, rep *Report) ([]*walk, error) {
	var walks []*walk
	for _, rule := range Rules {
		keep := opts.Keeps.Of(rule.Table)
		tr := TableReport{Table: rule.Table, Keep: FormatDuration(keep), Done: true}
		if c, ok := cutoff(rule.Table, keep, opts.Now); ok {
			tr.Cutoff, tr.Done = &c, false
			w := &walk{i: len(rep.Tables), cutoff: c}
			if rule.Table == Sends {
				var err error
				if w.windows, err = store.PruneSendWindows(ctx, db, opts.BounceWindow); err != nil {
					return nil, err
				}
			}
			walks = append(walks, w)
		}
		rep.Tables = append(rep.Tables, tr)
	}
	return walks, nil
}

// add counts one batch: in a dry run what matched would go; otherwise
// what was deleted went and what matched but was held stays for later.
func (tr *TableReport) add(b store.PruneBatch, dryRun bool) {
	tr.Batches++
	tr.Scanned += b.Scanned
	if dryRun {
		tr.Deleted += b.Matched
	} else {
		tr.Deleted += b.Deleted
		tr.Skipped += b.Matched - b.Deleted
	}
	tr.Done = b.Done
}

func sumDeleted(tables []TableReport) int64 {
	var n int64
	for _, t := range tables {
		n += t.Deleted
	}
	return n
}

func countOf(n int64) string { return fmt.Sprintf("%d row(s)", n) }
