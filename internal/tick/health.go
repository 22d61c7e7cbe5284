package tick

import (
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// StaleIntervals missed runs in a row are more than one slow or skipped
// firing: the scheduler is not running the tick.
const StaleIntervals = 3

// Health is the judgement of one tick kind's history in tick_runs.
type Health int

const (
	// Healthy: the last success is within StaleIntervals of the cadence.
	Healthy Health = iota
	// NeverRan: no run finished; only worth a note, as not every
	// deployment schedules every kind and a first run may be under way.
	NeverRan
	// NeverSucceeded: runs finished, none of them successfully.
	NeverSucceeded
	// Stale: the last success is older than StaleIntervals of the cadence.
	Stale
)

// HealthVerdict is what doctor reports about one kind.
type HealthVerdict struct {
	Health Health
	// Crashed: runs started more than a lease ago never finished; a
	// problem whatever Health says.
	Crashed bool
}

// JudgeHealth judges h for ticks scheduled every interval.
func JudgeHealth(h store.TickHealth, interval time.Duration) HealthVerdict {
	v := HealthVerdict{Crashed: h.Crashed > 0}
	switch {
	case h.Runs == 0:
		v.Health = NeverRan
	case h.SinceSuccess == nil:
		v.Health = NeverSucceeded
	case *h.SinceSuccess > StaleIntervals*interval:
		v.Health = Stale
	default:
		v.Health = Healthy
	}
	return v
}
