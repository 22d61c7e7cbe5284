package invariants

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// summary is what the runs did, for docs/reliability.md.
type summary struct {
	Runs       int   `json:"runs"`
	FirstSeed  int64 `json:"first_seed"`
	Seconds    int64 `json:"seconds"`
	Processes  int   `json:"processes"`
	Kills      int   `json:"sigkills"`
	Restarts   int   `json:"postgres_restarts"`
	Shifts     int   `json:"time_shifts"`
	Deliveries int   `json:"messages_delivered"`
	Violations int   `json:"violations"`
}

// TestInvariants runs seeded random schedules (see package doc) and checks
// every invariant after each. Each run prints its seed; a failure prints
// the command that replays it.
func TestInvariants(t *testing.T) {
	seed, runs, budget := settings(t)
	fmt.Printf("invariants: seed %d, up to %d runs", seed, runs)
	if budget > 0 {
		fmt.Printf(" or %s", budget)
	}
	fmt.Println()
	started := time.Now()
	sum := summary{FirstSeed: seed}
	for i := range runs {
		if budget > 0 && time.Since(started) > budget {
			break
		}
		s := seed + int64(i)
		var w *world
		t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			w = newWorld(t, s)
			w.schedule()
			ev := w.collect()
			failed := false
			for _, c := range activeChecks() {
				if v := c.run(ev); len(v) > 0 {
					failed = true
					sum.Violations += len(v)
					t.Errorf("invariant %q broken %d time(s):\n  %s", c.name, len(v), strings.Join(first(v, 10), "\n  "))
				}
			}
			for _, e := range w.exit2 {
				t.Errorf("a process exited 2 (the harness called it wrong):\n%s", e)
			}
			if failed || os.Getenv("RINDA_INVARIANTS_VERBOSE") != "" {
				t.Logf("schedule:\n  %s", strings.Join(w.logs, "\n  "))
				t.Logf("replay: make invariants SEED=%d RUNS=1", s)
			}
			sum.Deliveries += len(ev.deliveries)
		})
		sum.Runs++
		if w != nil {
			sum.Processes += w.processes
			sum.Kills += w.kills
			sum.Restarts += w.restarts
			for _, l := range w.logs {
				if strings.HasPrefix(l, "time moves forward") {
					sum.Shifts++
				}
			}
		}
		fmt.Printf("invariants: run %d seed %d: %s\n", i+1, s, map[bool]string{true: "FAIL", false: "ok"}[t.Failed()])
		if t.Failed() {
			break
		}
	}
	sum.Seconds = int64(time.Since(started) / time.Second)
	line, _ := json.Marshal(sum)
	fmt.Printf("invariants: %s\n", line)
	if path := os.Getenv(figuresEnv); path != "" {
		if fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			_, _ = fh.Write(append(line, '\n'))
			fh.Close()
		}
	}
}

func first(v []string, n int) []string {
	if len(v) > n {
		return append(v[:n:n], fmt.Sprintf("... and %d more", len(v)-n))
	}
	return v
}
