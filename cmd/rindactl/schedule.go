package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// specOff leaves a tick out of the generated units or the run.
const specOff = "off"

func newCmdSchedule(f *Factory) *cobra.Command {
	return groupCommand("schedule", "Print crontab, systemd or Kubernetes units that run the ticks",
		"Generate deployment units for the ticks from cron specs, and the env file they load.",
		newCmdSchedulePrint(f), newCmdScheduleEnvFile(f))
}

// SchedulePrintOptions holds the flags of `rindactl schedule print`.
type SchedulePrintOptions struct {
	f      *Factory
	Format string
	tickSpecs
	EnvFile string
	Binary  string
	User    string
	Image   string
	// DatabaseURLs are the cells' databases: one unit set per cell.
	DatabaseURLs []string
	// Unsubscribe is where the unsubscribe server's units listen, or off.
	Unsubscribe string
	// Changed reports a flag given on the command line.
	Changed func(name string) bool
}

// scheduleFlagFormats are the flags only some formats use: giving one to
// another format is a mistake to report, not to ignore.
var scheduleFlagFormats = map[string][]schedule.Format{
	"env-file": {schedule.FormatCrontab, schedule.FormatSystemd},
	"binary":   {schedule.FormatCrontab, schedule.FormatSystemd},
	"user":     {schedule.FormatSystemd},
	"image":    {schedule.FormatKubernetes},
	// Crontab cannot run a server.
	"unsubscribe": {schedule.FormatSystemd, schedule.FormatKubernetes},
}

func newCmdSchedulePrint(f *Factory) *cobra.Command {
	opts := &SchedulePrintOptions{f: f}
	cmd := &cobra.Command{
		Use:   "print --format crontab|systemd|kubernetes",
		Short: "Print units for --format crontab|systemd|kubernetes",
		Long: `Print ready-to-install units that run "rindactl enrich tick", "rindactl email
tick", "rindactl events deliver", "rindactl inbox tick" and "rindactl prune"
on cron specs (five fields; default every minute, prune hourly at minute 17;
"off" leaves a tick out; a leading
CRON_TZ=Zone fires the spec in that IANA zone: spec.timeZone for Kubernetes,
a zone in OnCalendar= for systemd, refused for crontab). Each tick gets a
--max-duration below its interval so it ends before its next firing.

  crontab     crontab lines that load --env-file and log to the journal
  systemd     a hardened oneshot .service and a .timer per tick; OnCalendar=
              is translated from the cron spec; enrichment and prune run at
              a lower CPU and IO priority so email keeps its pace; and a
              .socket and .service pair that starts "rindactl unsubscribe
              serve" by socket activation on --unsubscribe (exits when idle)
  kubernetes  a CronJob per tick with its environment from a Secret, and a
              Deployment and Service for "rindactl unsubscribe serve" (on
              the port of --unsubscribe; put an Ingress with TLS in front)

--unsubscribe off leaves the unsubscribe server out; crontab cannot run it.

Overlapping ticks are safe: rows are claimed with FOR UPDATE SKIP LOCKED and
a lease. A spec that is invalid, or that systemd cannot express, exits 2.

With --database-urls (cells: workspaces placed on several independent
Postgres clusters, docs/scaling.md) one unit set is printed per URL, named
rindactl-CELL-KIND; each cell's units load their own env file beside
--env-file (/etc/rindactl/CELL.env) or Secret (rindactl-CELL), which holds
that cell's DATABASE_URL: the units never carry a URL. A cell is named
NAME=URL, or after its URL's database. Each cell gets its own unsubscribe
server, rindactl-CELL-unsubscribe, the n-th cell's on --unsubscribe's
port + n-1.
For crontab and systemd, an existing --env-file is checked too: a line that
sh and systemd would read differently exits 2 with its line number (see
'rindactl schedule env-file' for the format).`,
		Example: `  rindactl schedule print --format crontab | crontab -u rindactl -
  rindactl schedule print --format systemd --enrich '*/2 * * * *' --events off
  rindactl schedule print --format kubernetes > rindactl-cronjobs.yaml
  rindactl schedule print --format systemd --database-urls eu-1=postgres://eu-1.db/rinda,us-1=postgres://us-1.db/rinda`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Changed = cmd.Flags().Changed
			return schedulePrintRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "format", "", "unit format: crontab, systemd or kubernetes (required)")
	opts.tickSpecs.register(cmd)
	fl.StringVar(&opts.EnvFile, "env-file", schedule.EnvFileDefault, "KEY=value file with DATABASE_URL and provider keys (crontab, systemd)")
	fl.StringVar(&opts.Binary, "binary", schedule.BinaryDefault, "absolute path of rindactl on the host (crontab, systemd)")
	fl.StringVar(&opts.User, "user", "", "user the systemd units run as (default: DynamicUser=yes)")
	fl.StringVar(&opts.Image, "image", schedule.ImageFor(buildVersion()), "container image (kubernetes): a release binary defaults to its own tag ("+schedule.ImageRepo+":vX.Y.Z), a development build to "+schedule.ImageDefault)
	fl.StringVar(&opts.Unsubscribe, "unsubscribe", schedule.UnsubscribeListenDefault, `host:port the unsubscribe server listens on (systemd socket; kubernetes: its port), or off`)
	fl.StringSliceVar(&opts.DatabaseURLs, "database-urls", nil, "one unit set per cell: NAME=URL or URL, comma-separated or repeated (docs/scaling.md)")
	return cmd
}

func schedulePrintRun(_ context.Context, opts *SchedulePrintOptions) error {
	format, err := opts.format()
	if err != nil {
		return err
	}
	ticks, err := opts.tickSpecs.parse(schedule.Parse)
	if err != nil {
		return err
	}
	plans, err := opts.plans(format, ticks)
	if err != nil {
		return err
	}
	var files []schedule.File
	for _, p := range plans {
		fs, err := schedule.Render(format, p)
		if err != nil {
			// Render only rejects its input: a value the format cannot carry.
			return usageError("%v", err)
		}
		if format != schedule.FormatKubernetes {
			if err := checkEnvFile(p.EnvFile); err != nil {
				return err
			}
		}
		files = append(files, fs...)
	}
	out := opts.f.IO.Out
	for i, file := range files {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprint(out, file.Content)
	}
	return nil
}

// format is --format, checked against the flags given that only some
// formats read.
func (opts *SchedulePrintOptions) format() (schedule.Format, error) {
	if opts.Format == "" {
		return "", usageError("--format is required: crontab, systemd or kubernetes")
	}
	format, err := schedule.ParseFormat(opts.Format)
	if err != nil {
		return "", usageError("--%v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(scheduleFlagFormats)) {
		if formats := scheduleFlagFormats[name]; opts.Changed != nil && opts.Changed(name) && !slices.Contains(formats, format) {
			return "", usageError("--%s does not apply to --format %s (only to %v)", name, format, formats)
		}
	}
	return format, nil
}

// plans is the plan of the units, or one per cell with --database-urls.
func (opts *SchedulePrintOptions) plans(format schedule.Format, ticks []schedule.Tick) ([]schedule.Plan, error) {
	unsub := opts.Unsubscribe
	if unsub == specOff || format == schedule.FormatCrontab {
		unsub = ""
	}
	plan := schedule.Plan{Ticks: ticks, Binary: opts.Binary, EnvFile: opts.EnvFile, User: opts.User, Image: opts.Image, Unsubscribe: unsub}
	if len(opts.DatabaseURLs) == 0 {
		return []schedule.Plan{plan}, nil
	}
	cells, err := schedule.ParseCells(opts.DatabaseURLs)
	if err != nil {
		return nil, usageError("--database-urls: %v", err)
	}
	plans := make([]schedule.Plan, 0, len(cells))
	for i, c := range cells {
		p, err := plan.ForCell(c, i)
		if err != nil {
			return nil, usageError("--unsubscribe: %v", err)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// tickSpecs are the --enrich, --email, --events, --inbox and --prune cron
// specs that `schedule print` and `run` share.
type tickSpecs struct{ Enrich, Email, Events, Inbox, Prune string }

func (s *tickSpecs) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&s.Enrich, "enrich", schedule.SpecDefault, `cron spec for "enrich tick", or off`)
	fl.StringVar(&s.Email, "email", schedule.SpecDefault, `cron spec for "email tick", or off`)
	fl.StringVar(&s.Events, "events", schedule.SpecDefault, `cron spec for "events deliver", or off`)
	fl.StringVar(&s.Inbox, "inbox", schedule.SpecDefault, `cron spec for "inbox tick", or off`)
	fl.StringVar(&s.Prune, "prune", schedule.DefaultSpec(tickkind.Prune), `cron spec for "prune", or off`)
}

// errEveryTickOff: no tick left to schedule or run (doctor accepts it).
var errEveryTickOff = usageError("every tick is off: give a cron spec to --enrich, --email, --events or --inbox")

// parse turns the specs into ticks, leaving out the ones set to "off". A
// bad spec is a usage error naming its flag.
func (s tickSpecs) parse(parse func(string) (schedule.Spec, error)) ([]schedule.Tick, error) {
	var ticks []schedule.Tick
	for _, flag := range []struct {
		kind tickkind.Kind
		text string
	}{{tickkind.Enrich, s.Enrich}, {tickkind.Email, s.Email}, {tickkind.Events, s.Events}, {tickkind.Inbox, s.Inbox}, {tickkind.Prune, s.Prune}} {
		if flag.text == specOff {
			continue
		}
		spec, err := parse(flag.text)
		if err != nil {
			return nil, usageError("--%s: %v", flag.kind, err)
		}
		ticks = append(ticks, schedule.Tick{Kind: flag.kind, Spec: spec})
	}
	if len(ticks) == 0 {
		return nil, errEveryTickOff
	}
	return ticks, nil
}

// checkEnvFile rejects an env file sh and systemd would read differently
// (exit 2, one line per problem, never a value). A file that is missing or
// unreadable here (mode 0600, owned by root) is left to 'rindactl doctor'
// on the host.
func checkEnvFile(path string) error {
	problems, err := schedule.CheckEnvFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil
		}
		return usageError("env file %s: %v", path, err)
	}
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.Error()
	}
	return usageError("env file %s: sh (crontab) and systemd would read it differently:\n  %s", path, strings.Join(msgs, "\n  "))
}

// ScheduleEnvFileOptions holds the flags of `rindactl schedule env-file`.
type ScheduleEnvFileOptions struct {
	f    *Factory
	Path string
	Vars []string
}

func newCmdScheduleEnvFile(f *Factory) *cobra.Command {
	opts := &ScheduleEnvFileOptions{f: f}
	cmd := &cobra.Command{
		Use:   "env-file PATH",
		Short: "Write the env file the crontab and systemd units load, quoted for both",
		Long: `Write DATABASE_URL (from --database-url or the environment), every RINDA_*
variable of this environment and each --var to PATH, mode 0600, replaced in
one rename. Each line is KEY="value" with \, ", $ and ` + "`" + ` escaped, the
one form that sh (the crontab lines source the file) and systemd's
EnvironmentFile= both read unchanged: a DATABASE_URL with &, $, spaces or
quotes survives both. Prints the names written, never the values.

Kubernetes reads no env file: 'kubectl create secret --from-env-file' keeps
quotes literally, so create the Secret with --from-literal (docs/deploy.md).`,
		Example: `  sudo -E rindactl schedule env-file /etc/rindactl/env --var SMTP_PASSWORD_SALES
  rindactl doctor --env-file /etc/rindactl/env   # check a hand-edited file`,
		Args: exactArgs(1, "PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = args[0]
			return scheduleEnvFileRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Vars, "var", nil, "also write this variable from the environment (a mailbox's password_env); repeatable")
	return cmd
}

func scheduleEnvFileRun(_ context.Context, opts *ScheduleEnvFileOptions) error {
	if err := opts.f.CheckDatabaseURL(); err != nil {
		return err
	}
	vars := [][2]string{{"DATABASE_URL", opts.f.DatabaseURL}}
	var names []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "RINDA_") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range append(names, opts.Vars...) {
		value := opts.f.Getenv(name)
		if value == "" {
			if slices.Contains(opts.Vars, name) {
				return usageError("--var %s: not set in this environment", name)
			}
			continue
		}
		if !slices.ContainsFunc(vars, func(kv [2]string) bool { return kv[0] == name }) {
			vars = append(vars, [2]string{name, value})
		}
	}
	for _, kv := range vars {
		if _, err := schedule.EnvLine(kv[0], kv[1]); err != nil {
			return usageError("%v", err)
		}
	}
	if err := schedule.WriteEnvFile(opts.Path, vars); err != nil {
		return err
	}
	written := make([]string, len(vars))
	for i, kv := range vars {
		written[i] = kv[0]
	}
	fmt.Fprintf(opts.f.IO.Out, "wrote %s (mode 0600): %s\n", opts.Path, strings.Join(written, ", "))
	return nil
}
