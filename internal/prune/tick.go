package prune

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// MaxDurationDefault matches the other ticks: a run on an every-minute
// schedule ends before the next firing. Scheduled hourly (the default
// spec), a run gets the hour, and stops as soon as every table is done.
const MaxDurationDefault = 50 * time.Second

// TickOptions tunes RunTick.
type TickOptions struct {
	Keeps       Keeps
	Batch       int
	MaxDuration time.Duration
	DryRun      bool
	TickID      string
}

// TickReport is what `rindactl prune` prints.
type TickReport struct {
	// TickID is empty for a dry run, which records no tick_runs row.
	TickID string `json:"tick_id,omitempty"`
	Report
	DurationMS int64 `json:"duration_ms"`
}

// Counts are the rows deleted per table (tables with none left out), as
// tick_runs and the metrics count them.
func (r *TickReport) Counts() map[string]int {
	counts := map[string]int{}
	for _, t := range r.Tables {
		if t.Deleted > 0 {
			counts[string(t.Table)] = int(t.Deleted)
		}
	}
	return counts
}

// RunTick is one prune tick: a tick_runs row of kind prune (none for a dry
// run), the keeps counted back from its start on the database's clock, and
// Run bounded by MaxDuration. Stopped by ctx (SIGTERM) between batches, it
// records what it did and is not a failure.
func RunTick(ctx context.Context, pool *pgxpool.Pool, opts TickOptions) (*TickReport, error) {
	tick.Defaults(&opts, TickOptions{MaxDuration: MaxDurationDefault, Batch: BatchDefault, TickID: tick.NewID()})
	start := time.Now()
	rep := &TickReport{}
	prune := func(ctx context.Context, now time.Time) error {
		var err error
		rep.Report, err = Run(ctx, pool, Options{
			Keeps: opts.Keeps, Batch: opts.Batch, Now: now, StopAt: start.Add(opts.MaxDuration), DryRun: opts.DryRun,
		})
		rep.DurationMS = time.Since(start).Milliseconds()
		return err
	}
	if opts.DryRun { // deletes nothing: no run to record
		now, err := store.DBNow(ctx, pool)
		if err != nil {
			return nil, err
		}
		return rep, tick.CleanStop(prune(ctx, now))
	}
	rep.TickID = opts.TickID
	ran, err := tick.Run(ctx, pool, tick.Spec{Kind: tickkind.Prune, ID: opts.TickID}, func(ctx context.Context, started time.Time) tick.Outcome {
		// SIGTERM: what was deleted is recorded, the rest waits.
		err := prune(ctx, started)
		return tick.Outcome{Claimed: int(rep.Deleted), Counts: rep.Counts(), Err: err}
	})
	if !ran && err != nil {
		return nil, err // no start recorded: nothing to report
	}
	return rep, err
}
