package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUSample is CPU time (user + system) used so far by this process and by
// every process named postgres on this machine. Reading both around a run
// splits its cost between rindactl and a local database server; on a
// 2-core machine that split, not latency, bounds the email drain.
type CPUSample struct {
	self     time.Duration
	postgres time.Duration
	// postgresSeen is false when no postgres process is visible (the server
	// is elsewhere, or /proc is not there): postgres is then unknown.
	postgresSeen bool
}

// clockTick is the unit of /proc/PID/stat times (USER_HZ), 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

func SampleCPU() CPUSample {
	var s CPUSample
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		if d, ok := postgresCPU(string(b)); ok {
			s.postgres += d
			s.postgresSeen = true
		}
	}
	return s
}

// postgresCPU reads one /proc/PID/stat line when the process is postgres
// (its comm field is "(postgres)"): its own utime + stime, plus cutime +
// cstime, the time of its children that have ended. The postmaster waits
// for its backends, so a connection that closed during the run still
// counts.
func postgresCPU(stat string) (time.Duration, bool) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open || stat[open+1:end] != "postgres" {
		return 0, false
	}
	// After "comm)" comes field 3 (state); fields 14 to 17 are utime,
	// stime, cutime and cstime.
	f := strings.Fields(stat[end+1:])
	if len(f) < 15 {
		return 0, false
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, true
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
