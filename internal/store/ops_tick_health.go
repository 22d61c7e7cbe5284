package store

import (
	"context"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// TickHealth is what tick_runs says about one kind of tick.
type TickHealth struct {
	Kind tickkind.Kind
	// SinceSuccess is the time since the last successful run finished; nil
	// when no run succeeded.
	SinceSuccess *time.Duration
	// Runs counts the finished runs.
	Runs int64
	// Crashed counts runs that started more than a lease ago (within the
	// crash window) and never finished; NewestCrashed names the latest.
	Crashed       int64
	NewestCrashed string
	// LastError is the newest failed run's error; empty when none failed.
	LastError string
}

// TickHealthOf reads the health of each kind on the database's clock.
func TickHealthOf(ctx context.Context, db DBTX, kinds []tickkind.Kind, lease, crashWindow time.Duration) ([]TickHealth, error) {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	rows, err := sqlcdb.New(db).OpsTickHealth(ctx, sqlcdb.OpsTickHealthParams{
		Kinds: names, LeaseSecs: lease.Seconds(), CrashWindowSecs: crashWindow.Seconds(),
	})
	if err != nil {
		return nil, err
	}
	var out []TickHealth
	for _, r := range rows {
		h := TickHealth{
			Kind: tickkind.Kind(r.Kind), Runs: r.Runs,
			Crashed: r.Crashed, NewestCrashed: r.NewestCrashed, LastError: r.LastError,
		}
		if r.SuccessFinishedAt != nil {
			d := r.DbNow.Sub(*r.SuccessFinishedAt).Round(time.Second)
			h.SinceSuccess = &d
		}
		out = append(out, h)
	}
	return out, nil
}
