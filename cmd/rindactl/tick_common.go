package main

import (
	"context"
	"log/slog"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerhttp"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// tickBounds are the flags that bound every claiming tick: rows claimed at
// a time (--batch), when it stops claiming (--max-duration) and how long
// what it claimed stays leased to it (--lease).
type tickBounds struct {
	Batch       int
	MaxDuration time.Duration
	Lease       time.Duration
	// LeaseSet: --lease was given. Otherwise the lease grows to fit
	// --max-duration plus the kind's grace (tick.FitLease).
	LeaseSet bool
}

// leaseFlagHelp is the --lease help of a tick kind whose grace is what.
func leaseFlagHelp(what string) string {
	return "how long claimed rows stay leased to this tick; must exceed --max-duration plus " + what +
		"; unset, it grows to that plus " + tick.LeaseMargin.String() + " when the default is shorter"
}

// tickGrace is how long a tick of kind may hold a row past its
// --max-duration with default settings (enrich: the default provider HTTP
// timeout; its tick sizes its lease from the configured ones).
func tickGrace(kind tickkind.Kind) tick.Grace {
	switch kind {
	case tickkind.Email:
		return emailGrace
	case tickkind.Inbox:
		return inboxGrace
	case tickkind.Enrich:
		return tick.Grace{Duration: providerhttp.TimeoutDefault, What: "the provider HTTP timeout " + providerhttp.TimeoutDefault.String()}
	}
	return tick.Grace{What: "no grace"}
}

// fitLease applies the lease rule every tick kind shares (tick.FitLease):
// an explicit --lease that does not outlast --max-duration plus grace is
// a usage error; a default one grows to fit.
func (b *tickBounds) fitLease(grace tick.Grace) error {
	lease, err := tick.FitLease(b.Lease, b.LeaseSet, b.MaxDuration, grace)
	if err != nil {
		return usageError("%v", err)
	}
	b.Lease = lease
	return nil
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

// exportMetrics records a finished tick of kind in m (its duration, bound
// and success) and exports m as out says; it always adds the run's counts
// to the running totals. A failure is only logged: metrics never fail a
// tick.
func exportMetrics(ctx context.Context, f *Factory, pool *pgxpool.Pool, kind tickkind.Kind, m *metrics.Metrics, started time.Time, maxDuration time.Duration, ok bool, out tickOutputs) {
	m.ObserveTick(string(kind), time.Since(started), maxDuration, ok, time.Now())
	opts := metrics.ExportOptions{File: out.MetricsFile, PushgatewayURL: out.PushgatewayURL, Job: "rindactl_" + string(kind), Instance: out.PushInstance}
	if err := m.Export(ctx, pool, opts, string(kind)); err != nil {
		f.Logger().Warn("exporting metrics failed", "component", "tick", "kind", kind, "error", err.Error())
	}
}

// afterTick runs once a tick's work is recorded: it delivers pending
// domain events (quota_exhausted, mailbox_paused, ...) to the Slack webhook
// and exports metrics. Neither may fail the tick: the events wait in the
// outbox for the next run, and a metrics failure is logged.
func afterTick(ctx context.Context, f *Factory, pool *pgxpool.Pool, kind tickkind.Kind, m *metrics.Metrics, started time.Time, maxDuration time.Duration, ok bool, out tickOutputs) {
	// A tick stopped by SIGTERM still hands over its alerts, within bounds.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	log := f.Logger().With("component", "tick", "kind", kind)

	rep, err := events.DeliverEvents(ctx, pool, f.Getenv(events.SlackWebhookEnv), events.DeliverOptions{Metrics: m})
	switch {
	case err != nil:
		log.Warn("delivering events failed; they stay in the outbox for the next run", "error", err.Error())
	case rep.Delivered+rep.Failed > 0:
		log.Info("events delivered", "delivered", rep.Delivered, "failed", rep.Failed)
	}

	exportMetrics(ctx, f, pool, kind, m, started, maxDuration, ok, out)
}

// tickRun is what the email and inbox tick commands share: it opens the
// database, runs the tick, hands over events and metrics m (afterTick) and
// prints the report, as JSON or as text prints it, even when the tick
// failed part way.
func tickRun[R any](ctx context.Context, f *Factory, kind tickkind.Kind, bounds tickBounds, outputs tickOutputs,
	m *metrics.Metrics, run func(context.Context, *pgxpool.Pool) (*R, error), text func(*R)) error {
	format, err := parseOutput(outputs.Output)
	if err != nil {
		return err
	}
	started := time.Now()
	pool, err := f.OpenTickDB(ctx, kind)
	if err != nil {
		return err
	}
	defer pool.Close()
	rep, err := run(ctx, pool)
	afterTick(ctx, f, pool, kind, m, started, bounds.MaxDuration, err == nil, outputs)
	if rep == nil {
		return err
	}
	if format == cliio.FormatJSON {
		if werr := f.IO.WriteJSON(rep); werr != nil && err == nil {
			err = werr
		}
	} else {
		text(rep)
	}
	return err
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
