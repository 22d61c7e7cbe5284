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
