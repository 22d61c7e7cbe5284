package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
)

// Exit codes as rindactl's (README): 2 for usage and configuration, 1 for
// a runtime error.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// Factory hands the commands their input, output and database URL; tests
// build one over buffers and a chosen environment.
type Factory struct {
	IO     *cliio.IO
	Getenv func(string) string

	DatabaseURL string
	LogFormat   string
	LogLevel    string

	// The machine's load around a bench (bench_load.go).
	LoadAvgPath string
	MaxLoad     float64
	QuietWait   time.Duration
	machine     bench.MachineLoad
	machineRead bool
}

func newFactory(ios *cliio.IO, getenv func(string) string) *Factory {
	return &Factory{IO: ios, Getenv: getenv, LoadAvgPath: bench.LoadAvgPath}
}

// CheckDatabaseURL reports a missing or unparsable database URL as a
// configuration error (exit 2).
func (f *Factory) CheckDatabaseURL() error {
	if _, err := store.ParseConfig(store.Config{URL: f.DatabaseURL}); err != nil {
		return &codedError{code: exitUsage, err: err}
	}
	return nil
}

// rindactlBinary is the rindactl whose ticks the demo and the benchmarks
// run as child processes: the one beside this executable (make build puts
// both in bin/), else the one on PATH.
func rindactlBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "rindactl")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if bin, err := exec.LookPath("rindactl"); err == nil {
		return bin, nil
	}
	return "", usageError("no rindactl beside rindabench or on PATH to run the ticks: build both (make build)")
}

type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// usageError marks bad flags, arguments or configuration (exit 2).
func usageError(format string, args ...any) error {
	return &codedError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func newCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "rindabench",
		Short: "The incident demo and the benchmarks of rindactl (not shipped with it)",
		Long: `rindabench replays the incident rindactl exists for (demo) and measures
it (bench), with in-process stand-ins for Postgres, the providers, Slack,
SMTP and IMAP. It runs rindactl's ticks as child processes: the rindactl
beside this executable, else the one on PATH. "make build" builds both;
"rindactl demo" and "rindactl bench" run this binary.`,
		RunE:          needSubcommand,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &codedError{code: exitUsage, err: fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})
	// rindactl's global flags, so "rindactl --database-url X bench ..." reads
	// the same here.
	pf := root.PersistentFlags()
	pf.StringVar(&f.DatabaseURL, "database-url", "", "Postgres URL (default from $DATABASE_URL)")
	pf.StringVar(&f.LogFormat, "log-format", "", "log format on stderr: json or text (unused; rindactl's flag)")
	pf.StringVar(&f.LogLevel, "log-level", "info", "log level (unused; rindactl's flag)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		f.readEnv()
		return nil
	}
	root.AddCommand(newCmdDemo(f, nil), newCmdBench(f))
	return root
}

// readEnv completes the database URL from the environment and registers
// its secrets for redaction.
func (f *Factory) readEnv() {
	if f.DatabaseURL == "" {
		f.DatabaseURL = f.Getenv("DATABASE_URL")
	}
	redact.Register(f.Getenv("PGPASSWORD"))
	if cfg, err := store.ParseConfig(store.Config{URL: f.DatabaseURL}); err == nil {
		redact.Register(cfg.ConnConfig.Password)
	}
}

// execute runs the command line and maps the outcome to an exit code.
func execute(ctx context.Context, f *Factory, args []string) int {
	root := newCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(f.IO.ErrOut, "rindabench: "+redact.String(err.Error()))
	var coded *codedError
	if errors.As(err, &coded) {
		return coded.code
	}
	if strings.HasPrefix(err.Error(), "unknown command") {
		return exitUsage
	}
	return exitError
}

// exactArgs is cobra.ExactArgs with a usage exit code.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s takes %d argument(s) (%s), got %d\nRun '%s --help' for usage.", cmd.CommandPath(), n, what, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// groupCommand is a parent that only lists its subcommands.
func groupCommand(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unknown command %q for %q\nRun '%s --help' for usage.", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: needSubcommand,
	}
	c.AddCommand(subs...)
	return c
}

// orTestHook is a command's run, or runF when a test gave one.
func orTestHook[O any](runF, run func(context.Context, *O) error) func(context.Context, *O) error {
	if runF != nil {
		return runF
	}
	return run
}

// needSubcommand: a group without its subcommand prints its help to stderr
// and exits 2.
func needSubcommand(cmd *cobra.Command, _ []string) error {
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Help()
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return usageError("%s needs a subcommand: %s", cmd.CommandPath(), strings.Join(names, ", "))
}

func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
}

// parseOutput reads --output as text or json (else exit 2).
func parseOutput(value string) (cliio.Format, error) {
	format, err := cliio.ParseFormat(value, cliio.FormatText, cliio.FormatJSON)
	if err != nil {
		return "", usageError("%v", err)
	}
	return format, nil
}
