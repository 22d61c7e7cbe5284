package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/schedule"
)

// RunOptions holds the flags and injected parts of `rindactl run`.
type RunOptions struct {
	f *Factory
	tickSpecs
	ShutdownTimeout time.Duration

	// TickArgv is the child process that runs one tick; nil re-executes
	// this binary with the tick's subcommand.
	TickArgv func(schedule.Tick) []string
	// Signals stop the scheduler; nil listens for SIGTERM and SIGINT.
	Signals <-chan os.Signal
}

func newCmdRun(f *Factory, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{f: f}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Foreground scheduler: fire ticks as child processes on cron specs",
		Long: `For containers without cron: fire each tick on its cron spec as a separate
child process of this binary, never in-process, so one kind of work can never
starve another.

Specs have five fields, or six with a leading seconds field; "off" leaves a
tick out. A firing is skipped (and logged at warn) while the previous run of
its kind is still going. On SIGTERM or SIGINT the signal is forwarded to the
running ticks, which stop claiming and release what they hold; any still
running after --shutdown-timeout are killed (their leases return their rows).

Exits 0 after a signal, 2 on a bad spec or flag, 1 only if it cannot run at all.`,
		Example: `  rindactl run
  rindactl run --enrich '*/2 * * * *' --email '*/30 * * * * *' --events off`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return orTestHook(runF, runRun)(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.tickSpecs.register(cmd)
	fl.DurationVar(&opts.ShutdownTimeout, "shutdown-timeout", schedule.ShutdownTimeoutDefault, "how long running ticks get to exit after a signal before they are killed")
	return cmd
}

func runRun(_ context.Context, opts *RunOptions) error {
	ticks, err := opts.tickSpecs.parse(schedule.ParseWithSeconds)
	if err != nil {
		return err
	}
	if opts.ShutdownTimeout <= 0 {
		return usageError("--shutdown-timeout %v: use a positive duration like 30s", opts.ShutdownTimeout)
	}
	// Every child would fail on every firing without a database.
	if err := opts.f.CheckDatabaseURL(); err != nil {
		return err
	}
	argv := opts.TickArgv
	if argv == nil {
		argv, err = selfTickArgv(opts.f)
		if err != nil {
			return err
		}
	}
	jobs := make([]schedule.Job, 0, len(ticks))
	for _, t := range ticks {
		jobs = append(jobs, schedule.Job{Kind: t.Kind, Spec: t.Spec, Argv: argv(t)})
	}

	signals := opts.Signals
	if signals == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		defer signal.Stop(ch)
		signals = ch
	}
	runner := &schedule.Runner{
		Jobs:            jobs,
		ShutdownTimeout: opts.ShutdownTimeout,
		Logger:          opts.f.Logger(),
		Stdout:          opts.f.IO.Out,
		Stderr:          opts.f.IO.ErrOut,
	}
	if opts.f.DatabaseURL != "" {
		// Through the environment, not argv: argv is visible to every user in ps.
		runner.Env = append(os.Environ(), "DATABASE_URL="+opts.f.DatabaseURL)
	}
	return runner.Run(signals)
}

// selfTickArgv runs each tick as this same binary, passing on the global
// log flags so children log like their parent.
func selfTickArgv(f *Factory) (func(schedule.Tick) []string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this binary to run ticks with: %w", err)
	}
	return func(t schedule.Tick) []string {
		argv := append([]string{exe}, t.Command()...)
		if f.LogFormat != "" {
			argv = append(argv, "--log-format="+f.LogFormat)
		}
		return append(argv, "--log-level="+f.LogLevel)
	}, nil
}
