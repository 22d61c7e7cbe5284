package invariants

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"testing"

	"github.com/rindactl/rindactl/internal/pgtmp"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// Environment of the harness (make invariants sets them).
const (
	// seedEnv is the first run's seed; run i uses seed+i. Unset: the clock.
	seedEnv = "RINDA_INVARIANTS_SEED"
	// runsEnv is how many runs; durationEnv bounds them by time instead
	// (whichever ends first). Unset: shortRuns, or shortDuration.
	runsEnv     = "RINDA_INVARIANTS_RUNS"
	durationEnv = "RINDA_INVARIANTS_DURATION"
	// binaryEnv runs another rindactl build (an older commit, to show what
	// the harness finds there); unset, TestMain uses this tree's
	// (testkit.Rindactl).
	binaryEnv = "RINDA_INVARIANTS_BINARY"
	// figuresEnv names a file the run summary is appended to (JSON lines).
	figuresEnv = "RINDA_INVARIANTS_FIGURES"
	// widthEnv is the most email ticks an epoch runs at once, and with a
	// width above the default, the most enrich ticks too (issue 30: the
	// guarantees at 16 processes, `make invariants WIDTH=16`).
	widthEnv = "RINDA_INVARIANTS_WIDTH"
)

// widthDefault keeps the schedules (and so the seeds) of the harness as
// they were before widthEnv.
const widthDefault = 3

// Without settings, `go test` (make test) runs shortRuns runs: the harness
// end to end, in about 20 seconds. `make invariants` runs 200; CI runs it
// for two minutes (.ci/run).
const shortRuns = 2

// The harness's own Postgres: it restarts it under running ticks, which a
// cluster shared with other test packages cannot allow.
var cluster *pgtmp.Cluster

// binary is the rindactl executable the schedules run.
var binary string

// width is the most ticks of a kind an epoch runs at once (widthEnv).
var width = widthDefault

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rindactl-invariants-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "invariants:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if v := os.Getenv(widthEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 64 {
			fmt.Fprintf(os.Stderr, "invariants: %s=%q: want a number of ticks from 1 to 64\n", widthEnv, v)
			return 2
		}
		width = n
	}
	binary = os.Getenv(binaryEnv)
	if binary == "" {
		if binary, err = testkit.Rindactl(dir); err != nil {
			fmt.Fprintln(os.Stderr, "invariants: rindactl:", err)
			return 1
		}
	}
	cluster, err = pgtmp.Start(context.Background(), pgtmp.Options{InstallIfMissing: os.Getenv("CI") != ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "invariants:", err)
		return 1
	}
	defer cluster.Stop()
	// storetest clones each run's database from a migrated template on
	// this cluster.
	os.Setenv("DATABASE_URL", cluster.URL)
	return storetest.Run(m)
}

// settings reads the harness's environment.
func settings(t *testing.T) (seed int64, runs int, budget time.Duration) {
	t.Helper()
	seed, runs = time.Now().UnixNano()%1_000_000, shortRuns
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an integer seed", seedEnv, v)
		}
		seed = n
	}
	if v := os.Getenv(runsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of runs", runsEnv, v)
		}
		runs = n
	}
	if v := os.Getenv(durationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a duration such as 2m", durationEnv, v)
		}
		budget = d
	}
	return seed, runs, budget
}
