// Package tick holds what every kind of tick shares: its identity (used as
// the lease holder, locked_by), its row in tick_runs, and the grouping of
// outcomes into few, short transactions.
package tick

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// recordTimeout bounds the writes a tick makes after it was told to stop:
// they must not hang, but they must not be cancelled by the signal either.
const recordTimeout = 10 * time.Second

// NewID names one tick: host, pid and a random suffix, so leases taken by
// two ticks of one process (tests) or a reused pid stay distinct.
func NewID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Row is one tick's row in tick_runs.
type Row struct {
	ID      string
	Kind    tickkind.Kind
	Started time.Time
	db      store.DBTX
}

// Result is what a finished tick records.
type Result struct {
	Claimed int
	// Counts by outcome (enriched, sent, ...); stored as JSON.
	Counts map[string]int
	// ExitStatus is the process exit code the tick will return.
	ExitStatus int
	Err        error
}

// CleanStop is a tick's error once its work returned: a tick its context
// stopped (SIGTERM) between two units of work has recorded what it did, so
// context.Canceled is a clean stop (nil, exit 0), not a failure.
func CleanStop(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// ErrStoppedBeforeStart is Start's error when the tick was told to stop
// (SIGTERM) while it recorded its start: it did nothing, and said so in
// tick_runs, so its caller returns an empty report and exit 0.
var ErrStoppedBeforeStart = errors.New("stopped before the tick started")

// Start records a tick's start. The row's finished_at stays NULL until
// Finish, so a crashed tick is visible as one that never finished.
// claimsFor is how long the tick may claim (its --max-duration), which
// email ticks read to share the mailboxes; 0 for kinds that need not say.
func Start(ctx context.Context, db store.DBTX, kind tickkind.Kind, id string, claimsFor time.Duration) (*Row, error) {
	host, _ := os.Hostname()
	r := &Row{ID: id, Kind: kind, db: db}
	run := store.TickRun{Kind: kind, TickID: id, Host: host, PID: os.Getpid()}
	started, err := store.TickRunStart(ctx, db, run, claimsFor)
	if err != nil && ctx.Err() != nil {
		// The signal, not the database, ended the start (which may have
		// committed): the row is written or finished as a clean stop.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		if serr := store.TickRunStopped(rctx, db, run); serr != nil {
			return nil, fmt.Errorf("recording %s tick stopped before its start: %w", kind, serr)
		}
		return nil, ErrStoppedBeforeStart
	}
	if err != nil {
		return nil, fmt.Errorf("recording %s tick start: %w", kind, err)
	}
	r.Started = started
	return r, nil
}

// Finish records the outcome. It runs even when ctx was cancelled by a
// signal: a tick that shut down cleanly must say so.
func (r *Row) Finish(ctx context.Context, res Result) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	counts := res.Counts
	if counts == nil {
		counts = map[string]int{}
	}
	cj, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	var errText *string
	if res.Err != nil {
		s := redact.Stored(res.Err.Error())
		errText = &s
	}
	err = store.TickRunFinish(ctx, r.db, r.ID, store.TickRunEnd{Claimed: res.Claimed, Counts: cj, ExitStatus: res.ExitStatus, Error: errText})
	if err != nil {
		return fmt.Errorf("recording %s tick finish: %w", r.Kind, err)
	}
	return nil
}

// Spec names the tick a Run records.
type Spec struct {
	Kind tickkind.Kind
	ID   string
	// ClaimsFor is how long the tick may claim (its --max-duration), which
	// email ticks read to share the mailboxes; 0 for kinds that need not
	// say.
	ClaimsFor time.Duration
}

// Outcome is what a kind's work did, for its row in tick_runs.
type Outcome struct {
	Claimed int
	// Counts by outcome (enriched, sent, ...).
	Counts map[string]int
	Err    error
	// Unsettled: the work left something a stop does not excuse (claimed
	// rows it could not record, a mailbox it failed to read): its error
	// stands even when the tick's context was cancelled. Otherwise a stop
	// by the context (SIGTERM) between two units of work is clean.
	Unsettled bool
}

// Run is every kind's tick lifecycle: it records the start (a tick told to
// stop while it did so ran nothing: ran false, no error), runs work with
// the start on the database's clock, turns a stop by ctx into a clean stop
// unless the work left something unsettled, and records the finish with
// the exit status (1 on an error) even after a signal. Its error is the
// work's, else the finish's.
func Run(ctx context.Context, db store.DBTX, spec Spec, work func(ctx context.Context, started time.Time) Outcome) (ran bool, err error) {
	row, err := Start(ctx, db, spec.Kind, spec.ID, spec.ClaimsFor)
	if errors.Is(err, ErrStoppedBeforeStart) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	out := work(ctx, row.Started)
	err = out.Err
	if !out.Unsettled {
		err = CleanStop(err)
	}
	res := Result{Claimed: out.Claimed, Counts: out.Counts, Err: err}
	if err != nil {
		res.ExitStatus = 1
	}
	if ferr := row.Finish(ctx, res); ferr != nil && err == nil {
		err = ferr
	}
	return true, err
}
