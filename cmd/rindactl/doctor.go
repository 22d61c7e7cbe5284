package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/secrets"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
	"github.com/rindactl/rindactl/internal/unsubscribe"
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
	// Mailboxes: log in to every active mailbox as 'mailbox test' does.
	Mailboxes bool
	// tickSpecs say which kinds are scheduled ("off": not on this host):
	// doctor checks that each scheduled kind can start here. A spec given
	// on the command line also sets the interval and lease that kind's
	// runs are judged by.
	tickSpecs
	// Changed reports a flag given on the command line.
	Changed func(name string) bool
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
the tick history in tick_runs for the enrich, email, events, inbox and prune
ticks:

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

A kind's spec given as to 'schedule print' (--email '*/10 * * * *') judges
that kind by its own interval and by the lease its ticks take on it (an
hourly tick running for 50 minutes has not crashed). prune is judged by
its spec always: its default one (hourly) unless --prune gives another.

Then it checks that every scheduled tick kind (all five unless its spec
flag is "off", as for 'schedule print') can start on this host with the
environment its unit gets: the env file when there is one, else this
process's environment (Kubernetes, rindactl run). A unit that would fail
every firing is a problem naming the unit: an enrich unit with no usable
finder (no RINDA_FINDYMAIL_API_KEY nor RINDA_HUNTER_API_KEY), an email
unit whose RINDA_UNSUBSCRIBE_BASE_URL is not an absolute https URL (http
only on a loopback host), or an env file without DATABASE_URL. An email
unit without RINDA_UNSUBSCRIBE_BASE_URL is a warning: its messages carry
only the mailto: unsubscribe, no one-click URL.

With the env file read, the database checked is the file's DATABASE_URL
and the workspaces' keys are opened with the file's RINDA_SECRET_KEY (or
RINDA_SECRET_KEY_FILE): what the units get, not this shell's. Every
RINDA_* setting a tick checks at its start is checked by the same code
the ticks run.

With --mailboxes it logs in to every active mailbox as 'rindactl mailbox
test' does (SMTP, and IMAP when set; nothing sent), with the units'
environment for the passwords: a failed login is a problem naming the
mailbox, the protocol and the stage (password, oauth, DNS, TCP, TLS, AUTH).

Exits 0 when everything is fine (warnings included), 1 with one line per problem on stderr
(a stale tick, an unreachable database: the next run may succeed), 2 on
bad flags or a configuration the ticks reject (a unit that would exit 2,
no or an invalid DATABASE_URL, a wrong master key).`,
		Example: `  rindactl doctor
  rindactl doctor --interval 5m   # ticks fire every 5 minutes
  rindactl doctor --enrich off    # this host does not run enrichment
  rindactl doctor --output json
  rindactl doctor --mailboxes     # also log in to every mailbox`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.EnvFileSet = cmd.Flags().Changed("env-file")
			opts.Changed = cmd.Flags().Changed
			return doctorRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	cmd.Flags().DurationVar(&opts.Interval, "interval", DoctorIntervalDefault, "how often the ticks are scheduled; a last success older than 3 intervals is a problem")
	cmd.Flags().StringVar(&opts.EnvFile, "env-file", schedule.EnvFileDefault, "env file of the crontab and systemd units to check (skipped with a note when the default is absent)")
	cmd.Flags().BoolVar(&opts.Mailboxes, "mailboxes", false, "also log in to every active mailbox over SMTP and IMAP, as 'mailbox test' does (nothing is sent)")
	cmd.Flags().DurationVar(&opts.Lease, "lease", longestLeaseDefault(), "the ticks' --lease; a tick unfinished after it has crashed")
	opts.tickSpecs.register(cmd)
	return cmd
}

type doctorReport struct {
	OK       bool     `json:"ok"`
	Checks   []string `json:"checks"`
	Problems []string `json:"problems"`
	// Notes are worth knowing but not wrong (a tick kind that never ran).
	Notes []string `json:"notes"`
	// Warnings are worth fixing but fail nothing (no one-click
	// unsubscribe URL).
	Warnings  []string        `json:"warnings"`
	Providers map[string]bool `json:"providers_configured"`
	// Units says per tick kind whether its unit can start on this host:
	// "ok", "off" (not scheduled here) or why it would fail.
	Units map[string]string `json:"units"`
	// UnsubscribeBaseURL is RINDA_UNSUBSCRIBE_BASE_URL as the email unit
	// gets it: "ok", "unset", "off" (no email unit here) or why it is
	// not usable.
	UnsubscribeBaseURL string `json:"unsubscribe_base_url"`
	// EnvFileRead: the units' environment was read from --env-file.
	EnvFileRead bool `json:"-"`
	// exit is the code doctor exits with: 0, 1 (a problem the next run
	// may not have) or 2 (a configuration every tick would reject).
	exit int
}

// problem adds a problem that exits with code (the exit code of the ticks
// that would meet it: 2 for a configuration they reject).
func (rep *doctorReport) problem(code int, msg string) {
	rep.Problems = append(rep.Problems, msg)
	rep.exit = max(rep.exit, code)
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if opts.Interval <= 0 || opts.Lease <= 0 {
		return usageError("--interval and --lease must be positive durations, such as 1m and 5m")
	}
	ticks, err := opts.tickSpecs.parse(schedule.ParseWithSeconds)
	if err != nil && !errors.Is(err, errEveryTickOff) {
		return err
	}
	rep := doctorReport{Checks: []string{}, Problems: []string{}, Notes: []string{}, Warnings: []string{}, Providers: map[string]bool{}, Units: map[string]string{}}

	// The units' environment first: the env file they load, when there
	// is one, names the database and the master key doctor checks.
	unitEnv := checkEnvFileFor(opts, &rep)
	unitGetenv := func(k string) string { v, _ := unitEnv(k); return v }
	// ownKeys are the providers some workspace has its own key for: an
	// enrich tick uses them whatever this host's keys.
	url, from := databaseOfUnits(opts, unitGetenv, &rep)
	ownKeys := checkDatabase(ctx, opts, url, from, unitGetenv, ticks, &rep)
	if opts.Mailboxes {
		checkMailboxLogins(ctx, opts.f.Now(), url, unitEnv, &rep)
	}

	for _, p := range providerNames {
		v, _ := unitEnv("RINDA_" + p + "_API_KEY")
		rep.Providers[p] = v != ""
	}
	checkUnits(ticks, unitEnv, ownKeys, opts, &rep)
	checkUnsubscribeBase(ticks, unitEnv, &rep)
	rep.OK = len(rep.Problems) == 0

	if err := printDoctor(opts.f.IO, format, rep); err != nil {
		return err
	}
	if rep.exit != exitOK {
		return &silentError{code: rep.exit}
	}
	return nil
}

// databaseOfUnits is the database URL the units connect to: the env
// file's DATABASE_URL when the file was read and sets one, else doctor's
// own (--database-url or DATABASE_URL).
func databaseOfUnits(opts *DoctorOptions, getenv func(string) string, rep *doctorReport) (url, from string) {
	if !rep.EnvFileRead {
		return opts.f.DatabaseURL, "DATABASE_URL"
	}
	fileURL := getenv("DATABASE_URL")
	if fileURL == "" {
		return opts.f.DatabaseURL, "DATABASE_URL"
	}
	registerSecrets(fileURL, getenv)
	if opts.f.DatabaseURL != "" && opts.f.DatabaseURL != fileURL {
		rep.Notes = append(rep.Notes, "doctor's own DATABASE_URL differs from the one in "+opts.EnvFile+"; checked the env file's, which the units use")
	}
	return fileURL, "DATABASE_URL of " + opts.EnvFile
}

// checkDatabase adds what the database says to rep: reachable, migrated,
// the tick history and the workspaces' own keys. It returns the providers
// some workspace has its own key for, and the configuration error (no or
// an invalid DATABASE_URL) that decides the exit code.
func checkDatabase(ctx context.Context, opts *DoctorOptions, url, from string, getenv func(string) string, ticks []schedule.Tick, rep *doctorReport) map[string]bool {
	ownKeys := map[string]bool{}
	pool, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		code := exitError // unreachable: the next run may succeed
		if errors.Is(err, store.ErrNoDatabaseURL) || !errors.As(err, new(*store.ConnError)) {
			code = exitUsage // no or an invalid URL: every tick exits 2
		}
		rep.problem(code, "database ("+from+"): "+err.Error())
		return ownKeys
	}
	defer pool.Close()
	rep.Checks = append(rep.Checks, "database reachable ("+from+")")
	pending, err := store.Pending(ctx, pool)
	switch {
	case err != nil:
		rep.problem(exitError, "schema: "+err.Error())
		return ownKeys
	case pending > 0:
		rep.problem(exitError, fmt.Sprintf("schema: %d migration(s) pending; run 'rindactl migrate'", pending))
		return ownKeys
	}
	rep.Checks = append(rep.Checks, "schema up to date")
	if err := checkTicks(ctx, pool, opts, ticks, rep); err != nil {
		rep.problem(exitError, "tick history: "+err.Error())
	}
	checkOwnKeys(ctx, pool, getenv, rep)
	if sealed, err := store.SealedProviderKeys(ctx, pool); err == nil {
		for _, k := range sealed {
			ownKeys[k.Provider] = true
		}
	}
	return ownKeys
}

// printDoctor prints rep: JSON, or a line per check, note and provider on
// stdout and a line per problem on stderr.
func printDoctor(ios *cliio.IO, format cliio.Format, rep doctorReport) error {
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	for _, c := range rep.Checks {
		fmt.Fprintln(ios.Out, "ok       "+c)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(ios.Out, "info     "+n)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(ios.Out, "warning  "+w)
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
	return nil
}

// checkTicks adds what tick_runs says about each kind to rep (on every
// host: the history is the database's).
func checkTicks(ctx context.Context, pool *pgxpool.Pool, opts *DoctorOptions, scheduled []schedule.Tick, rep *doctorReport) error {
	for _, kind := range tickkind.All {
		interval, lease, cadence := opts.cadence(kind, scheduled)
		health, err := store.TickHealthOf(ctx, pool, []tickkind.Kind{kind}, lease, crashWindow)
		if err != nil {
			return err
		}
		for _, h := range health {
			v := tick.JudgeHealth(h, interval)
			switch v.Health {
			case tick.NeverRan:
				rep.Notes = append(rep.Notes, string(h.Kind)+" tick never ran to the end (no finished tick_runs rows); fine if this deployment does not schedule it or its first run is under way")
			case tick.NeverSucceeded:
				rep.problem(exitError, fmt.Sprintf("%s tick: none of its %d run(s) succeeded%s; see 'rindactl status'", h.Kind, h.Runs, newestError(h)))
			case tick.Stale:
				rep.problem(exitError, fmt.Sprintf("%s tick: last success %s ago, more than %d × %s%s; check its schedule (cron, systemd timer, CronJob) and logs",
					h.Kind, *h.SinceSuccess, tick.StaleIntervals, cadence, newestError(h)))
			case tick.Healthy:
				rep.Checks = append(rep.Checks, fmt.Sprintf("%s tick last succeeded %s ago", h.Kind, *h.SinceSuccess))
			}
			if v.Crashed {
				rep.problem(exitError, fmt.Sprintf("%s tick: %d run(s) in the last %.0f hours never finished (newest %s); the process crashed or was killed before recording its run",
					h.Kind, h.Crashed, crashWindow.Hours(), h.NewestCrashed))
			}
		}
	}
	return nil
}

// cadence is the interval and lease kind's runs are judged by, and how to
// name the interval: --interval and --lease, unless kind's spec was given
// (then its interval, and the lease its generated units' ticks take on it:
// tick.FitLease over the spec's --max-duration; an explicit --lease wins).
func (opts *DoctorOptions) cadence(kind tickkind.Kind, scheduled []schedule.Tick) (interval, lease time.Duration, name string) {
	interval, lease, name = opts.Interval, opts.Lease, "--interval "+opts.Interval.String()
	changed := func(flag string) bool { return opts.Changed != nil && opts.Changed(flag) }
	// prune is not an every-minute tick: unless told, it is judged by its
	// default spec (hourly), and a run may take that hour without having
	// crashed.
	if kind != tickkind.Prune && !changed(string(kind)) {
		return interval, lease, name
	}
	for _, t := range scheduled {
		if t.Kind == kind {
			return opts.specCadence(t, changed("lease"))
		}
	}
	// Not scheduled here (--prune off): another host's prune runs on the
	// default spec; the every-minute --interval would call it stale.
	if spec, err := schedule.Parse(schedule.DefaultSpec(kind)); err == nil && kind == tickkind.Prune {
		return opts.specCadence(schedule.Tick{Kind: kind, Spec: spec}, changed("lease"))
	}
	return interval, lease, name
}

// specCadence judges t's kind by its spec's interval and the lease its
// generated units' ticks take on it (an explicit --lease wins).
func (opts *DoctorOptions) specCadence(t schedule.Tick, leaseGiven bool) (interval, lease time.Duration, name string) {
	interval, lease = t.Spec.Interval(), opts.Lease
	name = fmt.Sprintf("its interval %s (--%s %q)", interval, t.Kind, t.Spec)
	if !leaseGiven {
		lease, _ = tick.FitLease(opts.Lease, false, t.MaxDuration(), tickGrace(t.Kind))
	}
	return interval, lease, name
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
// It returns the environment the units get: the file's variables when it
// was read (crontab and systemd units see nothing else), else this
// process's.
func checkEnvFileFor(opts *DoctorOptions, rep *doctorReport) func(string) (string, bool) {
	vars, problems, err := schedule.ReadEnvFile(opts.EnvFile)
	env := opts.f.LookupEnv
	if err == nil {
		env = func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	rep.EnvFileRead = err == nil
	switch {
	case err != nil && !opts.EnvFileSet && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)):
		rep.Notes = append(rep.Notes, fmt.Sprintf("env file %s not checked: %v (pass --env-file to check another)", opts.EnvFile, errors.Unwrap(err)))
	case err != nil:
		rep.problem(exitError, fmt.Sprintf("env file %s: %v", opts.EnvFile, errors.Unwrap(err)))
	case len(problems) > 0:
		for _, p := range problems {
			rep.problem(exitError, fmt.Sprintf("env file %s: %v; sh (crontab) and systemd would read it differently", opts.EnvFile, p))
		}
	default:
		rep.Checks = append(rep.Checks, "env file "+opts.EnvFile+" reads the same in sh and systemd")
	}
	return env
}

// checkUnits adds to rep whether the unit of each scheduled tick kind can
// start on this host with env, the environment the unit gets: a unit that
// would exit 2 on every firing is a problem.
func checkUnits(scheduled []schedule.Tick, env func(string) (string, bool), ownKeys map[string]bool, opts *DoctorOptions, rep *doctorReport) {
	for _, kind := range tickkind.All {
		rep.Units[string(kind)] = "off"
	}
	where := "this host's environment"
	if rep.EnvFileRead {
		where = opts.EnvFile
	}
	for _, t := range scheduled {
		why := unitCannotStart(t.Kind, env, ownKeys, rep.EnvFileRead)
		if why == "" {
			rep.Units[string(t.Kind)] = "ok"
			continue
		}
		rep.Units[string(t.Kind)] = why
		rep.problem(exitUsage, fmt.Sprintf("rindactl-%s unit (%s) would fail on this host with %s: %s; fix it there, or leave the unit out (--%s off)",
			t.Kind, strings.Join(t.Kind.Args(), " "), where, why, t.Kind))
	}
}

// unitCannotStart says why a tick of kind would exit 2 at start with
// lookup's environment (and workspaces' own keys for the providers in
// ownKeys), or "" when it can start.
func unitCannotStart(kind tickkind.Kind, lookup func(string) (string, bool), ownKeys map[string]bool, fromFile bool) string {
	env := func(k string) string { v, _ := lookup(k); return v }
	if fromFile && env("DATABASE_URL") == "" {
		return "no DATABASE_URL"
	}
	var providers []string
	if kind == tickkind.Enrich {
		providers = enrichProvidersDefault
	}
	// The settings every tick of kind reads at its start, as it reads them.
	if _, err := readTickSettings(kind, providers, env); err != nil {
		return err.Error()
	}
	if kind != tickkind.Enrich {
		return ""
	}
	var finders []enrich.Finder
	for _, name := range enrichProvidersDefault {
		fd, err := provider.NewFinder(name, env)
		if err != nil {
			return err.Error()
		}
		finders = append(finders, fd)
	}
	if _, _, err := enrich.UsableFinders(finders, func(p string) bool { return ownKeys[p] }); err != nil {
		return err.Error()
	}
	return ""
}

// checkUnsubscribeBase reports RINDA_UNSUBSCRIBE_BASE_URL as the email
// unit gets it. Unset is a warning: the email tick runs, but its messages
// carry only the mailto: unsubscribe (Gmail and Yahoo expect the RFC 8058
// one-click URL from bulk senders). Not usable, checkUnits already made it
// a problem of the email unit.
func checkUnsubscribeBase(scheduled []schedule.Tick, lookup func(string) (string, bool), rep *doctorReport) {
	rep.UnsubscribeBaseURL = "off"
	if !slices.ContainsFunc(scheduled, func(t schedule.Tick) bool { return t.Kind == tickkind.Email }) {
		return
	}
	// Set but empty is unset, as every tick reads it.
	raw, _ := lookup(unsubscribe.BaseURLEnv)
	if raw == "" {
		rep.UnsubscribeBaseURL = "unset"
		rep.Warnings = append(rep.Warnings, unsubscribe.BaseURLEnv+" is not set for the email unit: messages carry only the mailto: unsubscribe (or the campaign's unsubscribe_url), no one-click URL; run 'rindactl unsubscribe serve' and set it to its https address (docs/email.md, \"Unsubscribe\")")
		return
	}
	base, err := unsubscribe.ParseBaseURL(raw)
	if err != nil {
		rep.UnsubscribeBaseURL = err.Error()
		return
	}
	rep.UnsubscribeBaseURL = "ok"
	rep.Checks = append(rep.Checks, "unsubscribe one-click URL "+unsubscribe.URL(base, "TOKEN"))
}

// checkOwnKeys reports whether the master key on this host opens the
// workspaces' own provider keys (never a key itself).
func checkOwnKeys(ctx context.Context, pool *pgxpool.Pool, getenv func(string) string, rep *doctorReport) {
	keys, err := secrets.Load(ctx, pool, getenv)
	var kerr *secrets.ConfigError
	switch {
	case errors.As(err, &kerr):
		// The enrich tick exits 2 on it.
		rep.problem(exitUsage, "workspace provider keys: "+err.Error())
	case err != nil:
		rep.problem(exitError, "workspace provider keys: "+err.Error())
	case len(keys) > 0:
		n := 0
		for _, byProvider := range keys {
			n += len(byProvider)
		}
		rep.Checks = append(rep.Checks, fmt.Sprintf("%d workspace provider key(s) open with the master key", n))
	}
}
