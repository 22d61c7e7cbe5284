package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// DoctorOptions holds the flags and clients of `rindactl doctor`.
type DoctorOptions struct {
	f      *Factory
	Output string
	// Interval is the tick cadence: a kind whose last success is older
	// than tick.StaleIntervals of it is reported.
	Interval time.Duration
	// Lease is the longest a tick may hold its rows: one started longer
	// ago that never finished has crashed.
	Lease time.Duration
	// EnvFile is the file the crontab and systemd units load; EnvFileSet
	// says it was named on the command line (then it must exist).
	EnvFile    string
	EnvFileSet bool
}

// DoctorIntervalDefault is the cadence the generated schedules use.
const DoctorIntervalDefault = time.Minute

// crashWindow is how far back doctor looks for crashed ticks: recent enough
// to act on, short enough that one old crash does not fail doctor forever.
const crashWindow = 24 * time.Hour

// providerNames are the providers whose keys doctor reports.
var providerNames = []string{"HUNTER", "FINDYMAIL", "MILLIONVERIFIER"}

func newCmdDoctor(f *Factory) *cobra.Command {
	opts := &DoctorOptions{f: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the database, the schema and provider configuration",
		Long: `Check that the database is reachable and fully migrated, report which
providers have an API key configured (never the keys themselves), and check
the tick history in tick_runs for the enrich, email, events and inbox ticks:

  - a kind whose last successful run finished more than three --interval
    ago is a problem: the scheduler (cron, systemd timer, CronJob, rindactl
    run) is not running it, or every run fails (a kind whose runs all
    failed is reported with its newest error);
  - a tick that started more than --lease ago (within the last 24 hours)
    and never finished is a problem: it crashed or was killed without its
    SIGTERM grace, and its rows waited for their lease;
  - a kind that never ran is only noted: not every deployment runs both.

It also checks the env file the crontab and systemd units load (--env-file):
a line that sh and systemd would read differently is a problem, reported
with its line number and never its value.

Exits 0 when everything is fine, 1 with one line per problem on stderr
(a stale tick is a problem an operator must see), 2 on bad flags.`,
		Example: `  rindactl doctor
  rindactl doctor --interval 5m   # ticks fire every 5 minutes
  rindactl doctor --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.EnvFileSet = cmd.Flags().Changed("env-file")
			return doctorRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	cmd.Flags().DurationVar(&opts.Interval, "interval", DoctorIntervalDefault, "how often the ticks are scheduled; a last success older than 3 intervals is a problem")
	cmd.Flags().StringVar(&opts.EnvFile, "env-file", schedule.EnvFileDefault, "env file of the crontab and systemd units to check (skipped with a note when the default is absent)")
	cmd.Flags().DurationVar(&opts.Lease, "lease", max(enrich.LeaseDefault, sequence.TickLeaseDefault), "the ticks' --lease; a tick unfinished after it has crashed")
	return cmd
}

type doctorReport struct {
	OK       bool     `json:"ok"`
	Checks   []string `json:"checks"`
	Problems []string `json:"problems"`
	// Notes are worth knowing but not wrong (a tick kind that never ran).
	Notes     []string        `json:"notes"`
	Providers map[string]bool `json:"providers_configured"`
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if opts.Interval <= 0 || opts.Lease <= 0 {
		return usageError("--interval and --lease must be positive durations, such as 1m and 5m")
	}
	rep := doctorReport{Checks: []string{}, Problems: []string{}, Notes: []string{}, Providers: map[string]bool{}}

	pool, err := opts.f.OpenDB(ctx)
	var configErr *codedError
	errors.As(err, &configErr)
	if err != nil {
		rep.Problems = append(rep.Problems, "database: "+err.Error())
	} else {
		defer pool.Close()
		rep.Checks = append(rep.Checks, "database reachable")
		pending, err := store.Pending(ctx, pool)
		switch {
		case err != nil:
			rep.Problems = append(rep.Problems, "schema: "+err.Error())
		case pending > 0:
			rep.Problems = append(rep.Problems, fmt.Sprintf("schema: %d migration(s) pending; run 'rindactl migrate'", pending))
		default:
			rep.Checks = append(rep.Checks, "schema up to date")
			if err := checkTicks(ctx, pool, opts, &rep); err != nil {
				rep.Problems = append(rep.Problems, "tick history: "+err.Error())
			}
			checkOwnKeys(ctx, opts.f, pool, &rep)
		}
	}

	checkEnvFileFor(opts, &rep)
	for _, p := range providerNames {
		rep.Providers[p] = opts.f.Getenv("RINDA_"+p+"_API_KEY") != ""
	}
	rep.OK = len(rep.Problems) == 0

	ios := opts.f.IO
	if format == cliio.FormatJSON {
		if err := ios.WriteJSON(rep); err != nil {
			return err
		}
	} else {
		for _, c := range rep.Checks {
			fmt.Fprintln(ios.Out, "ok       "+c)
		}
		for _, n := range rep.Notes {
			fmt.Fprintln(ios.Out, "info     "+n)
		}
		for _, p := range providerNames {
			state := "no key (RINDA_" + p + "_API_KEY unset): enrich ticks on this host skip it"
			if rep.Providers[p] {
				state = "key configured"
			}
			fmt.Fprintf(ios.Out, "provider %-16s %s\n", p, state)
		}
		for _, p := range rep.Problems {
			fmt.Fprintln(ios.ErrOut, "problem  "+p)
		}
	}
	if configErr != nil {
		return &silentError{code: configErr.code} // no or an invalid DATABASE_URL: exit 2
	}
	if !rep.OK {
		return &silentError{code: exitError}
	}
	return nil
}

// checkTicks adds what tick_runs says about each scheduled kind to rep.
func checkTicks(ctx context.Context, pool *pgxpool.Pool, opts *DoctorOptions, rep *doctorReport) error {
	health, err := store.TickHealthOf(ctx, pool, []tickkind.Kind{tickkind.Email, tickkind.Enrich, tickkind.Events, tickkind.Inbox}, opts.Lease, crashWindow)
	if err != nil {
		return err
	}
	for _, h := range health {
		v := tick.JudgeHealth(h, opts.Interval)
		switch v.Health {
		case tick.NeverRan:
			rep.Notes = append(rep.Notes, string(h.Kind)+" tick never ran to the end (no finished tick_runs rows); fine if this deployment does not schedule it or its first run is under way")
		case tick.NeverSucceeded:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s tick: none of its %d run(s) succeeded%s; see 'rindactl status'", h.Kind, h.Runs, newestError(h)))
		case tick.Stale:
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s tick: last success %s ago, more than %d × --interval %s%s; check its schedule (cron, systemd timer, CronJob) and logs",
				h.Kind, *h.SinceSuccess, tick.StaleIntervals, opts.Interval, newestError(h)))
		case tick.Healthy:
			rep.Checks = append(rep.Checks, fmt.Sprintf("%s tick last succeeded %s ago", h.Kind, *h.SinceSuccess))
		}
		if v.Crashed {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s tick: %d run(s) in the last %.0f hours never finished (newest %s); the process crashed or was killed before recording its run",
				h.Kind, h.Crashed, crashWindow.Hours(), h.NewestCrashed))
		}
	}
	return nil
}

// newestError quotes the newest failure of a kind, if any, so a tick that
// keeps failing says why without a second command.
func newestError(h store.TickHealth) string {
	if h.LastError == "" {
		return ""
	}
	return fmt.Sprintf(" (newest failure: %s)", h.LastError)
}

// checkEnvFileFor adds what the env file check finds to rep. The default
// path missing is only a note: Kubernetes and 'rindactl run' need no file.
func checkEnvFileFor(opts *DoctorOptions, rep *doctorReport) {
	problems, err := schedule.CheckEnvFile(opts.EnvFile)
	switch {
	case err != nil && !opts.EnvFileSet && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)):
		rep.Notes = append(rep.Notes, fmt.Sprintf("env file %s not checked: %v (pass --env-file to check another)", opts.EnvFile, errors.Unwrap(err)))
	case err != nil:
		rep.Problems = append(rep.Problems, fmt.Sprintf("env file %s: %v", opts.EnvFile, errors.Unwrap(err)))
	case len(problems) > 0:
		for _, p := range problems {
			rep.Problems = append(rep.Problems, fmt.Sprintf("env file %s: %v; sh (crontab) and systemd would read it differently", opts.EnvFile, p))
		}
	default:
		rep.Checks = append(rep.Checks, "env file "+opts.EnvFile+" reads the same in sh and systemd")
	}
}

// checkOwnKeys reports whether the master key on this host opens the
// workspaces' own provider keys (never a key itself).
func checkOwnKeys(ctx context.Context, f *Factory, pool *pgxpool.Pool, rep *doctorReport) {
	keys, err := secrets.Load(ctx, pool, f.Getenv)
	switch {
	case err != nil:
		rep.Problems = append(rep.Problems, "workspace provider keys: "+err.Error())
	case len(keys) > 0:
		n := 0
		for _, byProvider := range keys {
			n += len(byProvider)
		}
		rep.Checks = append(rep.Checks, fmt.Sprintf("%d workspace provider key(s) open with the master key", n))
	}
}
