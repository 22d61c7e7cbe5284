package bench

import (
	"testing"
	"time"
)

func TestParsePostgresStatReadsOwnAndEndedChildrenTime(t *testing.T) {
	t.Parallel()
	// A postmaster's line from /proc/PID/stat: parent 1, utime 4, stime 42,
	// cutime 20576 and cstime 2231 ticks (its ended backends).
	postmaster := "6943 (postgres) S 1 6943 6943 0 -1 4194304 18180 1819940 1 72 4 42 20576 2231 20 0 1 0 730696 381526016 11873"
	st, ok := parsePostgresStat(postmaster)
	if want := (postgresStat{pid: 6943, ppid: 1, cpu: (4 + 42 + 20576 + 2231) * 10 * time.Millisecond}); !ok || st != want {
		t.Fatalf("postmaster: got %+v, %v; want %+v", st, ok, want)
	}
	backend := "7001 (postgres) S 6943 6943 6943 0 -1 4194368 500 0 0 0 120 30 0 0 20 0 1 0 730800 381526016 3000"
	if st, ok := parsePostgresStat(backend); !ok || st.ppid != 6943 || st.cpu != 150*10*time.Millisecond {
		t.Fatalf("backend: got %+v, %v; want parent 6943 and 1.5s", st, ok)
	}
	for _, line := range []string{
		"14874 (cat) R 14872 14872 4752 0 -1 4194304 131 0 0 0 0 0 0 0 20 0 1 0 927640",
		"15000 (postgres: x) S 1 1 1 0 -1 4194304 1 0 0 0 5 5 0 0 20 0 1 0 1", // another program
		"15001 (postgres) S 1 1 1 0 -1 4194304 1 0 0 0 5",                     // cut short
		"15002 (postgres) S 1 1 1 0 -1 4194304 1 0 0 0 x 5 0 0 20 0 1 0 1",    // not a number
	} {
		if st, ok := parsePostgresStat(line); ok {
			t.Errorf("%q: counted %+v as postgres", line, st)
		}
	}
}

func TestClusterCPUCountsOnlyTheGivenCluster(t *testing.T) {
	t.Parallel()
	stats := []string{
		// The bench's cluster: postmaster 100 (1 s with its ended
		// backends) and a live backend (0.5 s).
		"100 (postgres) S 1 100 100 0 -1 4194304 1 0 0 0 40 10 30 20 20 0 1 0 1 1 1",
		"101 (postgres) S 100 100 100 0 -1 4194368 1 0 0 0 30 20 0 0 20 0 1 0 1 1 1",
		// Another engineer's cluster on the same machine: postmaster 200
		// and its backend, which must not count.
		"200 (postgres) S 1 200 200 0 -1 4194304 1 0 0 0 900 900 900 900 20 0 1 0 1 1 1",
		"201 (postgres) S 200 200 200 0 -1 4194368 1 0 0 0 700 700 0 0 20 0 1 0 1 1 1",
		// A program the postmaster started that is not postgres.
		"102 (sh) S 100 100 100 0 -1 4194368 1 0 0 0 500 500 0 0 20 0 1 0 1 1 1",
	}
	cpu, seen := clusterCPU(stats, 100)
	if !seen || cpu != 1500*time.Millisecond {
		t.Fatalf("got %v, seen %v; want 1.5s of cluster 100 only", cpu, seen)
	}
	if _, seen := clusterCPU(stats[2:], 100); seen {
		t.Fatal("postmaster 100 is gone: want postgres unseen")
	}
}

func TestPerItemLeavesPostgresUnknownWhenNotSeen(t *testing.T) {
	t.Parallel()
	start := CPUSample{self: time.Second, postgres: 2 * time.Second, postgresSeen: true}
	end := CPUSample{self: 3 * time.Second, postgres: 6 * time.Second, postgresSeen: true}
	self, pg := start.PerItem(end, 1000)
	if self != 2000 || pg == nil || *pg != 4000 {
		t.Fatalf("got self %v µs, postgres %v; want 2000 and 4000 µs per item", self, pg)
	}
	end.postgresSeen = false
	if _, pg := start.PerItem(end, 1000); pg != nil {
		t.Fatalf("postgres not visible at the end: want unknown, got %v", *pg)
	}
}

func TestSampleCPUCountsThisProcess(t *testing.T) {
	t.Parallel()
	before := SampleCPU(0)
	deadline := time.Now().Add(50 * time.Millisecond)
	for n := 0; time.Now().Before(deadline); n++ {
		_ = n * n
	}
	if after := SampleCPU(0); after.self <= before.self {
		t.Fatalf("CPU of this process did not grow over 50 ms of work: %v then %v", before.self, after.self)
	}
}
