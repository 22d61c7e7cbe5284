package bench_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// rindactl builds the binary once for the tests that run ticks as
// processes, as the storm does.
var rindactl = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "rindactl-bench-test-")
	if err != nil {
		return "", err
	}
	return testkit.Rindactl(dir)
})

// rindabench runs `bench storm` for the incident replay, beside a
// rindactl whose ticks it runs.
var rindabench = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "rindabench-bench-test-")
	if err != nil {
		return "", err
	}
	return testkit.Rindabench(dir)
})

func benchBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds rindabench")
	}
	bin, err := rindabench()
	if err != nil {
		t.Fatalf("building rindabench: %v", err)
	}
	return bin
}

func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds rindactl")
	}
	bin, err := rindactl()
	if err != nil {
		t.Fatalf("building rindactl: %v", err)
	}
	return bin
}

// The storm runs enrich tick processes against the stand-ins until its
// time is up, counts the calls they made and drops its schema. 6 s, not
// 2 s: the first tick process's start and claim on a loaded machine must
// fit before its first call, and 3,000 leads at 5 x 20 ms still take 12 s.
func TestStormTicksUntilItsTimeIsUp(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res, err := bench.Storm(context.Background(), bench.StormConfig{
		URL: db.URL, Binary: binary(t), Leads: 3000, Concurrency: 5, HunterLatency: 20 * time.Millisecond, Duration: 6 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ticks < 1 || res.ProviderCalls < 1 || res.Drained {
		t.Fatalf("result %+v: want calls made by at least one tick, the backlog left", res)
	}
	if postgresRunsHere() && res.PostgresCPUPerCallUS == nil {
		t.Fatalf("result %+v: want the local postgres CPU per call", res)
	}
	if n := schemas(t, db); n != 0 {
		t.Fatalf("%d scratch schemas left behind", n)
	}
}

// One pair of the replay: email alone, then beside the storm, which ran
// (made calls) while email drained.
func TestIncidentPairsEmailAloneAndBesideTheStorm(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res, err := bench.Incident(context.Background(), bench.IncidentConfig{
		URL: db.URL, Binary: benchBinary(t), Pairs: 1, Steps: 60, Mailboxes: 3, Warmup: 300 * time.Millisecond,
		Storm: bench.StormConfig{Leads: 3000, Concurrency: 5, HunterLatency: 20 * time.Millisecond, Binary: binary(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != 1 || res.Summary.Pairs != 1 {
		t.Fatalf("result %+v: want one pair", res)
	}
	p := res.Pairs[0]
	if p.AloneSendsPerSec <= 0 || p.StormSendsPerSec <= 0 || p.StormCallsPerSec <= 0 || p.Ratio != res.Summary.Median {
		t.Fatalf("pair %+v: want both rates, the storm's calls and their ratio", p)
	}
	t.Logf("cluster at start %+v; alone added %+v; storm added %+v", res.ClusterAtStart, p.AloneClusterAdded, p.StormClusterAdded)
	// The shared counters are read: the catalog is never empty, and each
	// run writes WAL (its schema's tables, its sends).
	if res.ClusterAtStart.CatalogBytes <= 0 || p.AloneClusterAdded.WALBytes <= 0 || p.StormClusterAdded.WALBytes <= 0 {
		t.Fatalf("cluster counters at start %+v, alone %+v, storm %+v: want the catalog's size and each run's WAL",
			res.ClusterAtStart, p.AloneClusterAdded, p.StormClusterAdded)
	}
	if n := schemas(t, db); n != 0 {
		t.Fatalf("%d scratch schemas left behind", n)
	}
}
