package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/redact"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(bi)
}

// versionFrom names a build not made by `make`: the module version of `go
// install ...@v1.4.0`, else the commit a plain `go build` stamped (with
// -dirty for uncommitted changes), else "dev".
func versionFrom(bi *debug.BuildInfo) string {
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "dev-" + rev + dirty
}

// Exit codes, documented in the README: a deliberate block (open breaker,
// paused mailbox) is not a failure and exits 0.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// exitError carries a specific exit code out of a command.
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

// silentError exits with code without printing anything more (the command
// already reported, e.g. doctor's problem lines).
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "rindactl",
		Short: "Lead enrichment and cold-email sequences as bounded batch ticks on Postgres",
		Long: `rindactl runs lead enrichment and cold-email sequences as short, bounded
batch runs ("ticks") against Postgres. cron or systemd timers run
"rindactl enrich tick" and "rindactl email tick" every minute, as separate
processes, on any number of hosts. A provider running out of quota opens a
breaker instead of looping, and can never delay an email.`,
		Version:       buildVersion(),
		RunE:          needSubcommand,
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  # prepare a database and check the setup
  export DATABASE_URL=postgres://rinda@localhost:5432/rinda
  rindactl migrate
  rindactl doctor

  # what is late, and why
  rindactl status --overdue`,
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &codedError{code: exitUsage, err: fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath())}
	})

	pf := root.PersistentFlags()
	// No default value here: cobra would print it in --help, password and all.
	pf.StringVar(&f.DatabaseURL, "database-url", "", "Postgres URL (default from $DATABASE_URL)")
	pf.StringVar(&f.LogFormat, "log-format", "", "log format on stderr: json or text (default: json unless stderr is a terminal)")
	pf.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if f.DatabaseURL == "" {
			f.DatabaseURL = f.Getenv("DATABASE_URL")
		}
		registerSecrets(f.DatabaseURL, f.Getenv)
		if f.LogFormat != "" && f.LogFormat != "json" && f.LogFormat != "text" {
			return usageError("invalid --log-format %q: use json or text", f.LogFormat)
		}
		switch strings.ToLower(f.LogLevel) {
		case "debug", "info", "warn", "warning", "error":
		default:
			return usageError("invalid --log-level %q: use debug, info, warn or error", f.LogLevel)
		}
		return nil
	}

	root.AddCommand(
		newCmdMigrate(f),
		newCmdImport(f),
		newCmdEnroll(f),
		newCmdEnrollment(f),
		newCmdEnrich(f),
		newCmdEmail(f),
		newCmdInbox(f),
		newCmdUnsubscribe(f),
		newCmdSuppressions(f),
		newCmdLead(f),
		newCmdStatus(f),
		newCmdRequeue(f),
		newCmdWhy(f),
		newCmdBreaker(f),
		newCmdMailbox(f),
		newCmdWorkspace(f),
		newCmdSecrets(f),
		newCmdProviders(f),
		newCmdEvents(f),
		newCmdSchedule(f),
		newCmdRun(f, nil),
		newCmdDemo(f),
		newCmdBench(f),
		newCmdDoctor(f),
	)
	addTickCommands(root, f)
	return root
}

// execute runs the command line and maps the outcome to an exit code.
func execute(ctx context.Context, f *Factory, args []string) int {
	root := newCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var silent *silentError
	if errors.As(err, &silent) {
		return silent.code
	}
	fmt.Fprintln(f.IO.ErrOut, "rindactl: "+redact.String(err.Error()))
	var coded *codedError
	if errors.As(err, &coded) {
		return coded.code
	}
	// cobra reports unknown commands as plain errors.
	if strings.HasPrefix(err.Error(), "unknown command") {
		fmt.Fprintln(f.IO.ErrOut, "Run 'rindactl --help' for the list of commands.")
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

// orTestHook is a command's run, or runF when a test gave one to see the
// parsed options without running.
func orTestHook[O any](runF, run func(context.Context, *O) error) func(context.Context, *O) error {
	if runF != nil {
		return runF
	}
	return run
}

// needSubcommand runs for a group without its subcommand ("rindactl email"):
// the help goes to stderr and the exit is 2, so a cron line missing "tick"
// fails loudly instead of looking like success.
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
