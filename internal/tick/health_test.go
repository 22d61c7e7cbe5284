package tick_test

import (
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

func TestJudgeHealth(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) *time.Duration { return &d }
	const interval = time.Minute
	for _, tc := range []struct {
		name string
		h    store.TickHealth
		want tick.HealthVerdict
	}{
		{"never ran", store.TickHealth{}, tick.HealthVerdict{Health: tick.NeverRan}},
		{"never ran but one crashed", store.TickHealth{Crashed: 1}, tick.HealthVerdict{Health: tick.NeverRan, Crashed: true}},
		{"runs, none succeeded", store.TickHealth{Runs: 4, LastError: "boom"}, tick.HealthVerdict{Health: tick.NeverSucceeded}},
		{"recent success", store.TickHealth{Runs: 9, SinceSuccess: ago(30 * time.Second)}, tick.HealthVerdict{Health: tick.Healthy}},
		{"exactly at the limit", store.TickHealth{Runs: 9, SinceSuccess: ago(3 * interval)}, tick.HealthVerdict{Health: tick.Healthy}},
		{"past the limit", store.TickHealth{Runs: 9, SinceSuccess: ago(3*interval + time.Second)}, tick.HealthVerdict{Health: tick.Stale}},
		{"healthy but crashed", store.TickHealth{Runs: 9, SinceSuccess: ago(time.Second), Crashed: 2}, tick.HealthVerdict{Health: tick.Healthy, Crashed: true}},
		{"stale and crashed", store.TickHealth{Runs: 9, SinceSuccess: ago(time.Hour), Crashed: 1}, tick.HealthVerdict{Health: tick.Stale, Crashed: true}},
	} {
		if got := tick.JudgeHealth(tc.h, interval); got != tc.want {
			t.Errorf("%s: JudgeHealth = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
