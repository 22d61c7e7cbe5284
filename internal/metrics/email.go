// Package metrics owns every Prometheus metric rindactl exports and their
// export to node_exporter's textfile collector or a Pushgateway. Metrics
// (tick.go) holds one run's counters and the shared gauges a tick reads
// from Postgres; Email is the email tick's running totals, kept in
// email_mailbox_totals, not what one short process did, so they only ever
// grow and rate() works across ticks, hosts and restarts.
package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rindactl/rindactl/internal/store"
)

var (
	emailMessagesDesc = prometheus.NewDesc("rindactl_email_messages_total",
		"Messages per mailbox since the mailbox was created, by outcome: sent (accepted by the server), failed (refused for good), "+
			"deferred (refused for now, retried later), delivery_unknown (no answer after the final dot; never resent).",
		[]string{"workspace", "mailbox", "outcome"}, nil)
	mailboxPausedDesc = prometheus.NewDesc("rindactl_email_mailbox_paused",
		"1 when the mailbox sends nothing now (paused by its provider's limit, or disabled), else 0.",
		[]string{"workspace", "mailbox"}, nil)
)

// Email is a snapshot of every mailbox's email totals, registered as a
// Prometheus collector.
type Email struct {
	mailboxes []store.EmailMailboxTotals
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
}
