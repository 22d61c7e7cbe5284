package store

import (
	"context"
	"time"

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
	rows, err := db.Query(ctx, query("ops_tick_health"), lease.Seconds(), crashWindow.Seconds(), kinds)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TickHealth
	for rows.Next() {
		var h TickHealth
		var since *float64
		if err := rows.Scan(&h.Kind, &since, &h.Runs, &h.Crashed, &h.NewestCrashed, &h.LastError); err != nil {
			return nil, err
		}
		if since != nil {
			d := time.Duration(*since * float64(time.Second)).Round(time.Second)
			h.SinceSuccess = &d
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
