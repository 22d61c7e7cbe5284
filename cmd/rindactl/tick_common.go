package main

import (
	"context"
	"log/slog"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/metrics"
)

// tickOutputs are the flags every tick shares for what it leaves behind
// besides its database writes: metrics.
type tickOutputs struct {
	MetricsFile    string
	PushgatewayURL string
}

func (o *tickOutputs) register(fl *pflag.FlagSet) {
	fl.StringVar(&o.MetricsFile, "metrics-file", "", "write Prometheus metrics to this node_exporter textfile (atomic rename)")
	fl.StringVar(&o.PushgatewayURL, "pushgateway-url", "", "push Prometheus metrics to this Pushgateway")
}

// afterTick runs once a tick's work is recorded: it delivers pending
// domain events (quota_exhausted, mailbox_paused, ...) to the Slack webhook
// and exports metrics. Neither may fail the tick: the events wait in the
// outbox for the next run, and a metrics failure is logged.
func afterTick(ctx context.Context, f *Factory, pool *pgxpool.Pool, kind string, m *metrics.Metrics, started time.Time, ok bool, out tickOutputs) {
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

	m.ObserveTick(kind, time.Since(started), ok, time.Now())
	if err := m.Export(ctx, pool, metrics.ExportOptions{File: out.MetricsFile, PushgatewayURL: out.PushgatewayURL, Job: "rindactl_" + kind}, kind); err != nil {
		log.Warn("exporting metrics failed", "error", err.Error())
	}
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
