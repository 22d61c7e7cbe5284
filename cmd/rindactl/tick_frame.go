package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// The tick frame: every tick command is a tickSpec, one kind's own part
// (its file: enrich.go, email.go, inbox.go, events.go), and this frame,
// which owns for every kind alike the bounding flags and their one rule
// each, the lease rule (tick.FitLease), the output and metrics flags,
// opening the database, delivering events and exporting metrics after the
// work, the report on success and on failure, and the exit code. The
// registry (ticks.go) lists the kinds.

// tickSpec is one tick kind's own part.
type tickSpec[R any] struct {
	kind tickkind.Kind
	// cmd carries Use (the last word of kind.Args()), Short, Long and
	// Example; the frame adds Args, RunE and the shared flags.
	cmd    *cobra.Command
	bounds tickBoundSpecs
	// flags registers the kind's own flags; nil: none.
	flags func(*pflag.FlagSet)
	// prepare checks the kind's own flags and environment before the
	// database is opened, and may size the lease's grace from the
	// environment (t.Grace). Its errors are usage errors (exit 2).
	prepare func(t *tickEnv) error
	// providers names the providers whose settings the kind reads (the
	// enrich tick's --providers and --verify); nil: none.
	providers func() []string
	// work runs one tick on t.Pool, counting into t.Metrics. A report it
	// returns is printed even with an error: what the tick did before it
	// failed. Without a report the tick never started; a usage error
	// (exit 2) then leaves no trace, no metrics and no events delivered.
	work func(ctx context.Context, t *tickEnv) (*R, error)
	// counts are a report's outcomes, the last run's gauges.
	counts func(*R) map[string]int
	// shared adds the database-wide series the kind exports (the email
	// tick's mailbox totals); called only when metrics are exported; nil:
	// none.
	shared func(ctx context.Context, pool *pgxpool.Pool, m *metrics.Metrics) error
	// text prints a report for people.
	text func(*cliio.IO, *R)
	// deliversEvents: the work is delivering events (events deliver), so
	// the frame does not deliver them again after it.
	deliversEvents bool
}

// tickCommand is a registered tick kind, whatever its report type.
type tickCommand interface {
	Kind() tickkind.Kind
	// Grace is how long the kind may hold a row past --max-duration with
	// default settings (no grace for a kind without --lease).
	Grace() tick.Grace
	// Bounds are the bounding flags the kind takes and their defaults.
	Bounds() tickBoundSpecs
	Command(f *Factory) *cobra.Command
}

// intBound declares --batch or --concurrency for a kind: its default, its
// help, and the largest value accepted (the smallest is 1).
type intBound struct {
	Default, Max int
	Help         string
}

// durationBound declares a kind's --max-duration.
type durationBound struct {
	Default time.Duration
	Help    string
}

// leaseBound declares a kind's --lease: its default, and the grace that
// the lease rule adds to --max-duration (GraceHelp names it in --help when
// the help says more than the error does).
type leaseBound struct {
	Default   time.Duration
	Grace     tick.Grace
	GraceHelp string
}

// niceBound declares --nice for a background kind.
type niceBound struct {
	Default int
	Help    string
}

// tickBoundSpecs are the bounding flags a kind takes: every kind has
// --max-duration; a nil one is a flag the kind does not have.
type tickBoundSpecs struct {
	Batch       *intBound
	Concurrency *intBound
	MaxDuration durationBound
	Lease       *leaseBound
	Nice        *niceBound
}

// Upper bounds of --batch and --concurrency for kinds that state none of
// their own: far beyond any useful value, low enough to catch a typo.
const (
	tickBatchMax       = 10000
	tickConcurrencyMax = 1000
)

// tickBounds are the values of the bounding flags.
type tickBounds struct {
	Batch       int
	Concurrency int
	MaxDuration time.Duration
	Lease       time.Duration
	// LeaseSet: --lease was given. Otherwise the lease grows to fit
	// --max-duration plus the kind's grace (tick.FitLease).
	LeaseSet bool
	Nice     int
}

func (s tickBoundSpecs) register(fl *pflag.FlagSet, b *tickBounds) {
	if s.Batch != nil {
		fl.IntVar(&b.Batch, "batch", s.Batch.Default, s.Batch.Help)
	}
	if s.Concurrency != nil {
		fl.IntVar(&b.Concurrency, "concurrency", s.Concurrency.Default, s.Concurrency.Help)
	}
	fl.DurationVar(&b.MaxDuration, "max-duration", s.MaxDuration.Default, s.MaxDuration.Help)
	if s.Lease != nil {
		what := s.Lease.GraceHelp
		if what == "" {
			what = s.Lease.Grace.What
		}
		fl.DurationVar(&b.Lease, "lease", s.Lease.Default, leaseFlagHelp(what))
	}
	if s.Nice != nil {
		fl.IntVar(&b.Nice, "nice", s.Nice.Default, s.Nice.Help)
	}
}

// check is the one rule of each bounding flag.
func (s tickBoundSpecs) check(b tickBounds) error {
	for _, c := range []struct {
		name  string
		bound *intBound
		value int
	}{{"batch", s.Batch, b.Batch}, {"concurrency", s.Concurrency, b.Concurrency}} {
		if c.bound != nil && (c.value < 1 || c.value > c.bound.Max) {
			return usageError("invalid --%s %d: use 1 to %d", c.name, c.value, c.bound.Max)
		}
	}
	if b.MaxDuration <= 0 {
		return usageError("invalid --max-duration %s: use a positive duration like 50s", b.MaxDuration)
	}
	return nil
}

// leaseFlagHelp is the --lease help of a tick kind whose grace is what.
func leaseFlagHelp(what string) string {
	return "how long claimed rows stay leased to this tick; must exceed --max-duration plus " + what +
		"; unset, it grows to that plus " + tick.LeaseMargin.String() + " when the default is shorter"
}

// tickOutputs are the flags every tick shares for what it leaves behind
// besides its database writes: its report and metrics.
type tickOutputs struct {
	Output         string
	MetricsFile    string
	PushgatewayURL string
	PushInstance   string
}

func (o *tickOutputs) register(cmd *cobra.Command) {
	addOutputFlag(cmd, &o.Output)
	fl := cmd.Flags()
	fl.StringVar(&o.MetricsFile, "metrics-file", "", "write Prometheus metrics to this node_exporter textfile (atomic rename); one file per tick kind (rindactl_<kind>.prom), all in one directory")
	fl.StringVar(&o.PushgatewayURL, "pushgateway-url", "", "push Prometheus metrics to this Pushgateway, grouped by job (rindactl_<kind>)")
	fl.StringVar(&o.PushInstance, "push-instance", "", "also group this run's gauges by instance=NAME on the Pushgateway (database-wide totals stay in the job's group)")
}

func (o tickOutputs) exporting() bool { return o.MetricsFile != "" || o.PushgatewayURL != "" }

// tickEnv is one run of a tick command: the bounding flags' values
// (checked, the lease fitted), the grace the lease was fitted to, and once
// the database is open, its pool and the run's metrics.
type tickEnv struct {
	f *Factory
	tickBounds
	tickOutputs
	Grace tick.Grace
	// Settings are the RINDA_* settings of the kind, read and checked
	// before prepare by readTickSettings, as doctor reads them.
	Settings tickSettings
	Pool     *pgxpool.Pool
	Metrics  *metrics.Metrics
}

func (s *tickSpec[R]) Kind() tickkind.Kind { return s.kind }

func (s *tickSpec[R]) Grace() tick.Grace {
	if s.bounds.Lease == nil {
		return tick.Grace{What: "no grace"}
	}
	return s.bounds.Lease.Grace
}

func (s *tickSpec[R]) Bounds() tickBoundSpecs { return s.bounds }

// Command is the kind's cobra command, built around its own part.
func (s *tickSpec[R]) Command(f *Factory) *cobra.Command {
	t := &tickEnv{f: f}
	cmd := s.cmd
	cmd.Args = exactArgs(0, "none")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		t.LeaseSet = cmd.Flags().Changed("lease")
		return s.run(cmd.Context(), t)
	}
	s.bounds.register(cmd.Flags(), &t.tickBounds)
	if s.flags != nil {
		s.flags(cmd.Flags())
	}
	t.tickOutputs.register(cmd)
	return cmd
}

// run is every tick kind's run: check, open, work, hand over, report.
func (s *tickSpec[R]) run(ctx context.Context, t *tickEnv) error {
	format, err := s.check(t)
	if err != nil {
		return err
	}
	lowerPriority(t.Nice, t.f.Logger())
	started := time.Now()
	if t.Pool, err = t.f.OpenTickDB(ctx, s.kind); err != nil {
		if ctx.Err() != nil {
			// A signal while connecting: nothing was claimed, nothing to
			// record; a stop asked for is not a failure.
			t.f.Logger().Info(string(s.kind)+" tick stopped by a signal before it reached the database", "err", err)
			return nil
		}
		return err
	}
	defer t.Pool.Close()
	t.Metrics = metrics.NewMetrics()

	rep, err := s.work(ctx, t)
	if rep == nil && isUsage(err) {
		return err
	}
	if rep == nil && err != nil && ctx.Err() != nil {
		// A signal while the kind read what it needs before its start
		// (the enrich tick's stored keys): nothing was claimed, so, as
		// while connecting, the stop asked for is not a failure.
		t.f.Logger().Info(string(s.kind)+" tick stopped by a signal before it started", "err", err)
		return nil
	}
	if rep != nil {
		t.Metrics.ObserveOutcomes(string(s.kind), s.counts(rep))
	}
	s.afterWork(ctx, t, started, err == nil)
	if rep == nil {
		return err
	}
	if werr := s.print(t.f.IO, format, rep); werr != nil && err == nil {
		err = werr
	}
	return err
}

// check is every check made before the database is opened: the output
// format, the bounding flags, the kind's own configuration, then the
// lease rule over the grace the kind settled on.
func (s *tickSpec[R]) check(t *tickEnv) (cliio.Format, error) {
	format, err := parseOutput(t.Output)
	if err != nil {
		return "", err
	}
	if err := s.bounds.check(t.tickBounds); err != nil {
		return "", err
	}
	t.Grace = s.Grace()
	var providers []string
	if s.providers != nil {
		providers = s.providers()
	}
	if t.Settings, err = readTickSettings(s.kind, providers, t.f.Getenv); err != nil {
		return "", asUsage(err)
	}
	if s.prepare != nil {
		if err := s.prepare(t); err != nil {
			return "", asUsage(err)
		}
	}
	if s.bounds.Lease != nil {
		// A row may be worked until --max-duration plus the grace; a lease
		// ending earlier would let another tick take it meanwhile.
		if t.Lease, err = tick.FitLease(t.Lease, t.LeaseSet, t.MaxDuration, t.Grace); err != nil {
			return "", usageError("%v", err)
		}
	}
	return format, nil
}

// print writes the report as format asks.
func (s *tickSpec[R]) print(ios *cliio.IO, format cliio.Format, rep *R) error {
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	s.text(ios, rep)
	return nil
}

// afterWorkTimeout bounds the hand-over after the work, which runs even
// when a signal stopped the tick.
const afterWorkTimeout = 15 * time.Second

// afterWork runs once a tick's work is recorded: it delivers pending
// domain events (quota_exhausted, mailbox_paused, ...) to the Slack
// webhook and exports the metrics, with the tick's duration, bound and
// success. Neither may fail the tick: the events wait in the outbox for
// the next run, and a metrics failure is logged. A tick stopped by
// SIGTERM still hands over its alerts, within bounds.
func (s *tickSpec[R]) afterWork(ctx context.Context, t *tickEnv, started time.Time, ok bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), afterWorkTimeout)
	defer cancel()
	log := t.f.Logger().With("component", "tick", "kind", s.kind)
	if !s.deliversEvents {
		rep, err := events.DeliverEvents(ctx, t.Pool, t.f.Getenv(events.SlackWebhookEnv), events.DeliverOptions{Metrics: t.Metrics})
		switch {
		case err != nil:
			log.Warn("delivering events failed; they stay in the outbox for the next run", "error", err.Error())
		case rep.Delivered+rep.Failed > 0:
			log.Info("events delivered", "delivered", rep.Delivered, "failed", rep.Failed)
		}
	}
	if s.shared != nil && t.exporting() {
		if err := s.shared(ctx, t.Pool, t.Metrics); err != nil {
			log.Warn(fmt.Sprintf("reading %s metrics failed", s.kind), "error", err.Error())
		}
	}
	m := t.Metrics
	m.ObserveTick(string(s.kind), time.Since(started), t.MaxDuration, ok, time.Now())
	opts := metrics.ExportOptions{File: t.MetricsFile, PushgatewayURL: t.PushgatewayURL, Job: "rindactl_" + string(s.kind), Instance: t.PushInstance}
	// Always: the run's counts go into the running totals even when this
	// host exports nothing.
	if err := m.Export(ctx, t.Pool, opts, string(s.kind)); err != nil {
		log.Warn("exporting metrics failed", "error", err.Error())
	}
}

// asUsage marks err as a usage error (exit 2) unless it carries its code.
func asUsage(err error) error {
	var coded *codedError
	if errors.As(err, &coded) {
		return err
	}
	return &codedError{code: exitUsage, err: err}
}

// isUsage reports whether err is a usage error (exit 2).
func isUsage(err error) bool {
	var coded *codedError
	return errors.As(err, &coded) && coded.code == exitUsage
}

// lowerPriority raises this process's niceness by n (capped at 19), so a
// background tick (enrichment) yields the CPU to email on a shared host.
// Lowering priority needs no privilege; a failure is only logged.
func lowerPriority(n int, log *slog.Logger) {
	if n <= 0 {
		return
	}
	// The raw getpriority syscall returns 20 - nice.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		log.Debug("reading niceness failed", "error", err.Error())
		return
	}
	nice := min(20-prio+n, 19)
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice); err != nil {
		log.Debug("lowering priority failed", "error", err.Error())
	}
}
