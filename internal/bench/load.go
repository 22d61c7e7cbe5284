package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// A figure counts only from a run started on a quiet machine: on the
// 2-core machine the figures come from, another suite or helper running
// beside a bench turns every ratio into noise (issue 40: 0.91 measured at
// load 14–22 was 0.79 on a quiet machine).
const (
	// QuietLoad is the 1-minute load average under which a run counts as
	// started quiet; a run started above it is marked void.
	QuietLoad = 1.5
	// MaxLoadDefault is the load above which a bench refuses to start
	// (after waiting up to QuietWaitDefault for it to fall).
	MaxLoadDefault = QuietLoad
	// QuietWaitDefault is how long a bench waits for the load to fall
	// under its maximum: the load average lags, so a bench started right
	// after a build or another bench waits a minute or two, not forever.
	QuietWaitDefault = 3 * time.Minute
	// LoadAvgPath is where Linux tells the load average.
	LoadAvgPath = "/proc/loadavg"
)

// MachineLoad is the load a bench figure was taken at, in its JSON output.
type MachineLoad struct {
	Before float64 `json:"load_before"`
	// After includes the bench's own work: it says how busy the run kept
	// the machine, not whether anything else ran.
	After float64 `json:"load_after"`
	// Quiet: the run started under QuietLoad; a figure without it is void.
	Quiet bool `json:"quiet"`
}

// ReadLoad returns the 1-minute load average in path (/proc/loadavg).
func ReadLoad(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the load average: %w", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, fmt.Errorf("reading the load average: %s is empty", path)
	}
	load, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, fmt.Errorf("reading the load average: %s: %w", path, err)
	}
	return load, nil
}

// AwaitQuiet waits up to wait, reading path every poll, for the load to
// fall under max, and returns the last reading. max 0 measures at any
// load. waiting is told each reading still over max. The error says the
// load, the limit and the two ways on.
func AwaitQuiet(ctx context.Context, path string, max float64, wait, poll time.Duration, waiting func(load float64)) (float64, error) {
	deadline := time.Now().Add(wait)
	for {
		load, err := ReadLoad(path)
		if err != nil || max == 0 || load < max {
			return load, err
		}
		if !time.Now().Add(poll).Before(deadline) {
			return load, fmt.Errorf("the load average is %.2f, over --max-load %.2f after waiting %s: a figure from a busy machine is noise; stop what runs beside the bench (test suites, other benches) and run it again, or pass --max-load 0 to measure anyway (the figure is marked void)",
				load, max, wait)
		}
		if waiting != nil {
			waiting(load)
		}
		select {
		case <-ctx.Done():
			return load, ctx.Err()
		case <-time.After(poll):
		}
	}
}
