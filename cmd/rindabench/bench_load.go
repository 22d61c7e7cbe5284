package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/bench"
)

// quietPoll is how often a bench waiting for a quiet machine reads the
// load.
const quietPoll = 5 * time.Second

// addLoadFlags gives the bench group its quiet-machine flags (issue 40).
// Every bench subcommand calls awaitQuiet once its input is checked, right
// before it measures, and its load is reported after the run, on stderr
// and as "machine" in its JSON output.
func addLoadFlags(group *cobra.Command, f *Factory) {
	pf := group.PersistentFlags()
	pf.Float64Var(&f.MaxLoad, "max-load", bench.MaxLoadDefault,
		"refuse to start while the 1-minute load average is over this (after --quiet-wait); 0 measures at any load, and a figure taken at 1.5 or more is marked void")
	pf.DurationVar(&f.QuietWait, "quiet-wait", bench.QuietWaitDefault, "how long to wait for the load to fall under --max-load")
	group.PersistentPostRunE = func(cmd *cobra.Command, args []string) error {
		if f.machineRead {
			fmt.Fprintln(f.IO.ErrOut, f.machineLine())
		}
		return nil
	}
}

// awaitQuiet waits up to --quiet-wait for the load average to fall under
// --max-load and refuses otherwise (exit 1: later, it may pass); it
// records the load the run starts at.
func (f *Factory) awaitQuiet(ctx context.Context) error {
	switch {
	case f.MaxLoad < 0:
		return usageError("invalid --max-load %g: use a load average such as 1.5, or 0 to measure at any load", f.MaxLoad)
	case f.QuietWait < 0:
		return usageError("invalid --quiet-wait %s: use a duration such as 3m, or 0 not to wait", f.QuietWait)
	}
	load, err := bench.AwaitQuiet(ctx, f.LoadAvgPath, f.MaxLoad, f.QuietWait, quietPoll, func(load float64) {
		fmt.Fprintf(f.IO.ErrOut, "bench: load average %.2f, waiting for it to fall under %.2f (up to %s)\n", load, f.MaxLoad, f.QuietWait)
	})
	if err != nil {
		return err
	}
	f.machine, f.machineRead = bench.MachineLoad{Before: load, Quiet: load < bench.QuietLoad}, true
	return nil
}

// machineLoad is the run's load with its end read now.
func (f *Factory) machineLoad() bench.MachineLoad {
	m := f.machine
	if after, err := bench.ReadLoad(f.LoadAvgPath); err == nil {
		m.After = after
	}
	return m
}

// machineLine says the run's load, and that its figure is void when the
// machine was busy.
func (f *Factory) machineLine() string {
	m := f.machineLoad()
	line := fmt.Sprintf("machine: load average %.2f before the run, %.2f after", m.Before, m.After)
	if !m.Quiet {
		return line + fmt.Sprintf(": NOT QUIET (%.2f or more before the run): the figures are void", bench.QuietLoad)
	}
	return line + ": quiet"
}

// writeBenchJSON writes a bench result with the machine's load beside its
// own keys ("machine").
func (f *Factory) writeBenchJSON(res any) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	doc["machine"] = f.machineLoad()
	return f.IO.WriteJSON(doc)
}
