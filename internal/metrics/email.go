// Package metrics owns every Prometheus metric rindactl exports and their
// export to node_exporter's textfile collector or a Pushgateway. Metrics
// (tick.go) holds one run's gauges (rindactl_tick_last_…) and the
// database-wide series: counters whose running totals live in Postgres
// (totals.go: metric_totals; Email: email_mailbox_totals), so they only
// ever grow and rate() works across ticks, hosts and restarts, and gauges
// read from Postgres. Each database-wide series is exported by exactly
// one tick kind (OwnedBy), so the per-kind textfiles coexist in one
// node_exporter directory and a Pushgateway holds each total once.
package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rindactl/rindactl/internal/store"
)

const (
	emailMessagesName      = "rindactl_email_messages_total"
	mailboxPausedName      = "rindactl_email_mailbox_paused"
	emailOverdueName       = "rindactl_email_overdue"
	emailOldestOverdueName = "rindactl_email_oldest_overdue_seconds"
)

var (
	emailOverdueDesc = prometheus.NewDesc(emailOverdueName,
		"Due sequence steps nothing but sending capacity holds back (rindactl status --overdue): not paused, not outside the window, not waiting for an address.",
		nil, nil)
	emailOldestOverdueDesc = prometheus.NewDesc(emailOldestOverdueName,
		"Age of the oldest overdue step, 0 when none.", nil, nil)
	emailMessagesDesc = prometheus.NewDesc(emailMessagesName,
		"Messages per mailbox since the mailbox was created, by outcome: sent (accepted by the server), failed (refused for good), "+
			"deferred (refused for now, retried later), delivery_unknown (no answer after the final dot; never resent).",
		[]string{"workspace", "mailbox", "outcome"}, nil)
	mailboxPausedDesc = prometheus.NewDesc(mailboxPausedName,
		"1 when the mailbox sends nothing now (paused by its provider's limit, or disabled), else 0.",
		[]string{"workspace", "mailbox"}, nil)
)

// Email is a snapshot of every mailbox's email totals, registered as a
// Prometheus collector.
type Email struct {
	mailboxes []store.EmailMailboxTotals
	overdue   *overdue
}

type overdue struct{ steps, oldestSeconds int64 }

// SetOverdue adds the overdue gauges: steps overdue now and the age of the
// oldest (status.EmailOverdue computes both).
func (e *Email) SetOverdue(steps, oldestSeconds int64) {
	e.overdue = &overdue{steps, oldestSeconds}
}

// LoadEmail reads the totals now.
func LoadEmail(ctx context.Context, db store.DBTX) (*Email, error) {
	mbs, err := store.EmailMetricsMailboxes(ctx, db)
	if err != nil {
		return nil, err
	}
	return &Email{mailboxes: mbs}, nil
}

// Describe implements prometheus.Collector.
func (e *Email) Describe(ch chan<- *prometheus.Desc) {
	ch <- emailMessagesDesc
	ch <- mailboxPausedDesc
	ch <- emailOverdueDesc
	ch <- emailOldestOverdueDesc
}

// Collect implements prometheus.Collector.
func (e *Email) Collect(ch chan<- prometheus.Metric) {
	for _, m := range e.mailboxes {
		for outcome, n := range map[string]int64{
			store.MetricSent: m.Sent, store.MetricFailed: m.Failed,
			store.MetricDeferred: m.Deferred, store.MetricDeliveryUnknown: m.DeliveryUnknown,
		} {
			ch <- prometheus.MustNewConstMetric(emailMessagesDesc, prometheus.CounterValue, float64(n), m.Workspace, m.Address, outcome)
		}
		paused := 0.0
		if m.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(mailboxPausedDesc, prometheus.GaugeValue, paused, m.Workspace, m.Address)
	}
	if o := e.overdue; o != nil {
		ch <- prometheus.MustNewConstMetric(emailOverdueDesc, prometheus.GaugeValue, float64(o.steps))
		ch <- prometheus.MustNewConstMetric(emailOldestOverdueDesc, prometheus.GaugeValue, float64(o.oldestSeconds))
	}
}
