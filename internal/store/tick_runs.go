package store

import (
	"context"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// TickRun is a tick as tick_runs knows it: its kind and id, and the host
// and process running it.
type TickRun struct {
	Kind   tickkind.Kind
	TickID string
	Host   string
	PID    int
}

// TickRunStart records run's start in tick_runs and returns it on the
// database's clock. finished_at stays NULL until TickRunFinish, so a
// crashed tick shows as one that never finished.
func TickRunStart(ctx context.Context, db DBTX, run TickRun, claimsFor time.Duration) (time.Time, error) {
	return sqlcdb.New(db).TickStart(ctx, sqlcdb.TickStartParams{Kind: string(run.Kind), TickID: run.TickID, Host: run.Host, Pid: int32(run.PID), ClaimsFor: claimsFor})
}

// TickRunEnd is what a finished tick records: the rows it claimed, its
// outcome counts as a JSON object, its exit status and its error (nil:
// none).
type TickRunEnd struct {
	Claimed    int
	Counts     []byte
	ExitStatus int
	Error      *string
}

// TickRunFinish records the end of tick tickID.
func TickRunFinish(ctx context.Context, db DBTX, tickID string, end TickRunEnd) error {
	exit := int32(end.ExitStatus)
	if end.Error != nil {
		e := redact.Stored(*end.Error)
		end.Error = &e
	}
	return sqlcdb.New(db).TickFinish(ctx, sqlcdb.TickFinishParams{
		TickID: tickID, Claimed: int32(end.Claimed), Counts: end.Counts, ExitStatus: &exit, Error: end.Error,
	})
}

// TickRunStopped records run as stopped cleanly before it started work,
// whether or not its cancelled start committed.
func TickRunStopped(ctx context.Context, db DBTX, run TickRun) error {
	return sqlcdb.New(db).TickStopped(ctx, sqlcdb.TickStoppedParams{Kind: string(run.Kind), TickID: run.TickID, Host: run.Host, Pid: int32(run.PID)})
}
