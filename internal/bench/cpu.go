package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store/benchstore"
)

// CPUSample is CPU time (user + system) used so far by this process and by
// the processes of one local postgres cluster: its postmaster and its
// backends. Reading both around a run splits its cost between the client
// and the database server; on a 2-core machine that split, not latency,
// bounds the email drain. Only the bench's own cluster counts: other
// clusters on a shared machine start and stop during a run.
type CPUSample struct {
	self time.Duration
	// children is the CPU of this process's children that have ended and
	// been waited for (the tick processes of bench width).
	children time.Duration
	postgres time.Duration
	// postgresSeen is false when the cluster's postmaster is not visible
	// (the server is elsewhere, or /proc is not there): postgres is then
	// unknown.
	postgresSeen bool
}

// clockTick is the unit of /proc/PID/stat times (USER_HZ), 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// Postmaster returns the process id of the local postmaster serving pool,
// or 0 when it is not on this machine: the parent of a backend of pool,
// read while that backend's connection is held.
func Postmaster(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	backend, err := benchstore.BenchBackendPID(ctx, conn)
	if err != nil {
		return 0, fmt.Errorf("reading the backend's pid: %w", err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", backend))
	if err != nil {
		return 0, nil // the server is not on this machine
	}
	st, ok := parsePostgresStat(string(b))
	if !ok {
		return 0, nil // another machine's pid, here some other program
	}
	return st.ppid, nil
}

// SampleCPU reads the CPU used so far by this process and by the cluster
// whose postmaster is pm (0: not measured).
func SampleCPU(pm int) CPUSample {
	var s CPUSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		s.children = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if pm == 0 {
		return s
	}
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	stats := make([]string, 0, len(paths))
	for _, path := range paths {
		if b, err := os.ReadFile(path); err == nil { // else the process ended meanwhile
			stats = append(stats, string(b))
		}
	}
	s.postgres, s.postgresSeen = clusterCPU(stats, pm)
	return s
}

// clusterCPU sums the CPU of the cluster whose postmaster is pm over
// /proc/PID/stat lines: the postmaster and its postgres children. seen is
// false when the postmaster is not among them.
func clusterCPU(stats []string, pm int) (cpu time.Duration, seen bool) {
	for _, line := range stats {
		if st, ok := parsePostgresStat(line); ok && (st.pid == pm || st.ppid == pm) {
			cpu += st.cpu
			seen = seen || st.pid == pm
		}
	}
	return cpu, seen
}

// postgresStat is what SampleCPU reads from one postgres process's
// /proc/PID/stat line.
type postgresStat struct {
	pid, ppid int
	// cpu is its own utime + stime, plus cutime + cstime, the time of its
	// children that have ended: the postmaster waits for its backends, so
	// a connection that closed during the run still counts.
	cpu time.Duration
}

// parsePostgresStat reads one /proc/PID/stat line when the process is
// postgres (its comm field is "(postgres)").
func parsePostgresStat(stat string) (postgresStat, bool) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open || stat[open+1:end] != "postgres" {
		return postgresStat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(stat[:open]))
	if err != nil {
		return postgresStat{}, false
	}
	// After "comm)" comes field 3 (state), then 4 (ppid); fields 14 to 17
	// are utime, stime, cutime and cstime.
	f := strings.Fields(stat[end+1:])
	if len(f) < 15 {
		return postgresStat{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return postgresStat{}, false
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return postgresStat{}, false
		}
		ticks += n
	}
	return postgresStat{pid: pid, ppid: ppid, cpu: time.Duration(ticks) * clockTick}, true
}

// PerItem is the CPU microseconds per item between two samples: this
// process's, and postgres's (nil when postgres is not visible here).
func (s CPUSample) PerItem(end CPUSample, items int) (self float64, postgres *float64) {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(items) }
	self = per(end.self - s.self)
	if s.postgresSeen && end.postgresSeen {
		pg := per(end.postgres - s.postgres)
		postgres = &pg
	}
	return self, postgres
}

// ChildrenPerItem is the CPU microseconds per item of the children that
// ended between two samples.
func (s CPUSample) ChildrenPerItem(end CPUSample, items int) float64 {
	return float64((end.children - s.children).Microseconds()) / float64(items)
}
