package bench

import (
	"slices"
	"testing"
	"time"
)

// TestStormArgs: the replay passes only the storm settings it was given,
// so an unset one keeps bench storm's default, and --tick-binary reaches
// the storm (a before/after replay).
func TestStormArgs(t *testing.T) {
	base := []string{"bench", "storm", "--schema", "s1", "--output", "json", "--max-load", "0"}
	for _, c := range []struct {
		name string
		sc   StormConfig
		want []string
	}{
		{"defaults", StormConfig{}, base},
		{"leads and batch", StormConfig{Leads: 5, Batch: 7}, append(slices.Clone(base), "--leads", "5", "--batch", "7")},
		{"concurrency and latency", StormConfig{Concurrency: 3, HunterLatency: 10 * time.Millisecond},
			append(slices.Clone(base), "--concurrency", "3", "--hunter-latency", "10ms")},
		{"tick binary", StormConfig{Binary: "/tmp/old"}, append(slices.Clone(base), "--tick-binary", "/tmp/old")},
	} {
		if got := stormArgs(c.sc, "s1"); !slices.Equal(got, c.want) {
			t.Errorf("%s: stormArgs = %q, want %q", c.name, got, c.want)
		}
	}
}
