package metrics

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// counterDef is a counter whose running total lives in metric_totals: every
// tick that counts adds to it (Flush); only owner exports it.
type counterDef struct {
	name, help string
	labels     []string
	owner      tickkind.Kind
	// zeros are label values exported at 0 before anything was counted, so
	// a series exists from the first export (increase() needs a start).
	zeros [][]string
}

var (
	leadsTotal = &counterDef{name: "rindactl_leads_total", owner: tickkind.Enrich, labels: []string{"outcome"},
		help:  "Leads an enrichment tick finished, by outcome, since the database was created (all hosts).",
		zeros: [][]string{{string(lead.Enriched)}, {string(lead.NotFound)}, {string(lead.Pending)}, {string(lead.Unreachable)}, {string(lead.EnrichmentFailed)}}}
	providerRequestsTotal = &counterDef{name: "rindactl_provider_requests_total", owner: tickkind.Enrich, labels: []string{"provider", "class"},
		help: "Provider calls made, by provider and result class, since the database was created (all hosts)."}
	guardBlockedTotal = &counterDef{name: "rindactl_guard_blocked_total", owner: tickkind.Enrich, labels: []string{"provider", "reason"},
		help: "Provider calls the guards refused (breaker, bucket, ceiling), by provider and reason, since the database was created (all hosts)."}
	eventsDeliveredTotal = &counterDef{name: "rindactl_events_delivered_total", owner: tickkind.Events, labels: []string{"kind", "result"},
		help: "Domain events posted to Slack, by event kind and result, by any tick on any host since the database was created."}

	counterDefs = []*counterDef{leadsTotal, providerRequestsTotal, guardBlockedTotal, eventsDeliveredTotal}
)

// seriesKey is one series of a counterDef: its label values joined.
type seriesKey struct {
	def    *counterDef
	values string
}

// labelSep joins label values in a seriesKey; it cannot occur in one.
const labelSep = "\x00"

func (m *Metrics) count(def *counterDef, n int64, values ...string) {
	if m == nil || n <= 0 {
		return
	}
	m.mu.Lock()
	m.counts[seriesKey{def, strings.Join(values, labelSep)}] += n
	m.mu.Unlock()
}

// Flush adds this run's counts to the running totals in Postgres and
// forgets them, so a second Flush adds nothing. A tick killed before it
// flushes loses its own counts, never anyone else's.
func (m *Metrics) Flush(ctx context.Context, db store.DBTX) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	counts := m.counts
	m.counts = map[seriesKey]int64{}
	m.mu.Unlock()
	deltas := make([]store.MetricTotal, 0, len(counts))
	for k, n := range counts {
		values := strings.Split(k.values, labelSep)
		labels := make(map[string]string, len(values))
		for i, name := range k.def.labels {
			labels[name] = values[i]
		}
		deltas = append(deltas, store.MetricTotal{Metric: k.def.name, Labels: labels, Value: n})
	}
	if err := store.AddMetricTotals(ctx, db, deltas); err != nil {
		// Keep them for a later Flush of this run.
		m.mu.Lock()
		for k, n := range counts {
			m.counts[k] += n
		}
		m.mu.Unlock()
		return err
	}
	return nil
}

// totals is the running totals of the counters one kind owns, as read.
type totals struct {
	defs   []*counterDef
	series []store.MetricTotal
}

func loadTotals(ctx context.Context, db store.DBTX, kind string) (*totals, error) {
	t := &totals{}
	var names []string
	for _, d := range counterDefs {
		if d.owner == tickkind.Kind(kind) {
			t.defs = append(t.defs, d)
			names = append(names, d.name)
		}
	}
	if len(names) == 0 {
		return t, nil
	}
	var err error
	t.series, err = store.MetricTotals(ctx, db, names)
	return t, err
}

func (d *counterDef) desc() *prometheus.Desc {
	return prometheus.NewDesc(d.name, d.help, d.labels, nil)
}

// Describe implements prometheus.Collector.
func (t *totals) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range t.defs {
		ch <- d.desc()
	}
}

// Collect implements prometheus.Collector.
func (t *totals) Collect(ch chan<- prometheus.Metric) {
	for _, d := range t.defs {
		desc := d.desc()
		seen := map[string]bool{}
		for _, s := range t.series {
			if s.Metric != d.name {
				continue
			}
			values := make([]string, len(d.labels))
			for i, name := range d.labels {
				values[i] = s.Labels[name]
			}
			seen[strings.Join(values, labelSep)] = true
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(s.Value), values...)
		}
		for _, values := range d.zeros {
			if !seen[strings.Join(values, labelSep)] {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, 0, values...)
			}
		}
	}
}

// OwnedBy lists the database-wide series each tick kind exports, by metric
// name: documentation and tests read it, so it stays the one list.
func OwnedBy() map[tickkind.Kind][]string {
	out := map[tickkind.Kind][]string{
		tickkind.Enrich: {"rindactl_breakers_open", "rindactl_workspace_spend_usd", creditsRemainingName, runwayName},
		tickkind.Email:  {emailMessagesName, mailboxPausedName, emailOverdueName, emailOldestOverdueName},
	}
	for _, d := range counterDefs {
		out[d.owner] = append(out[d.owner], d.name)
	}
	for k := range maps.Keys(out) {
		slices.Sort(out[k])
	}
	return out
}
