package metrics_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 27: rindactl_leads_total, rindactl_provider_requests_total,
// rindactl_guard_blocked_total and rindactl_events_delivered_total were one
// run's counts (7, then 14, then a series gone when a run had none), so
// increase() and rate() were wrong. They are running totals in Postgres:
// two hosts' runs add up, a run with nothing keeps the series, and a second
// export of one run adds nothing.
func TestCountersAreCumulativeAcrossRunsAndHosts(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "rindactl_enrich.prom")
	run := func(leads int, provider string) {
		t.Helper()
		m := metrics.NewMetrics()
		m.AddLeads("enriched", leads)
		if provider != "" {
			m.ProviderRequest(provider, "ok")
			m.GuardBlocked(provider, "breaker_open")
			m.EventDelivered("quota_exhausted", "delivered")
		}
		m.ObserveTick("enrich", time.Second, 50*time.Second, true, time.Now())
		if err := m.Export(ctx, db.TickPool(t), metrics.ExportOptions{File: file}, "enrich"); err != nil {
			t.Fatal(err)
		}
		// Exporting again adds nothing twice.
		if err := m.Export(ctx, db.TickPool(t), metrics.ExportOptions{File: file}, "enrich"); err != nil {
			t.Fatal(err)
		}
	}
	run(7, "hunter")    // host A
	run(7, "findymail") // host B
	run(0, "")          // a run with nothing to do

	fams := parse(t, file)
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"rindactl_leads_total", map[string]string{"outcome": "enriched"}, 14},
		{"rindactl_leads_total", map[string]string{"outcome": "unreachable"}, 0},
		{"rindactl_provider_requests_total", map[string]string{"provider": "hunter", "class": "ok"}, 1},
		{"rindactl_provider_requests_total", map[string]string{"provider": "findymail", "class": "ok"}, 1},
		{"rindactl_guard_blocked_total", map[string]string{"provider": "hunter", "reason": "breaker_open"}, 1},
	} {
		m := find(fams[c.family], c.labels)
		if m == nil || fams[c.family].GetType() != dto.MetricType_COUNTER || m.GetCounter().GetValue() != c.want {
			t.Errorf("%s%v = %v, want a counter at %v", c.family, c.labels, m, c.want)
		}
	}
	// Events delivered are counted by every kind but exported by one.
	if _, ok := fams["rindactl_events_delivered_total"]; ok {
		t.Error("the enrich textfile carries rindactl_events_delivered_total, which the events tick exports")
	}
	events := filepath.Join(t.TempDir(), "rindactl_events.prom")
	m := metrics.NewMetrics()
	if err := m.Export(ctx, db.TickPool(t), metrics.ExportOptions{File: events}, "events"); err != nil {
		t.Fatal(err)
	}
	if got := find(parse(t, events)["rindactl_events_delivered_total"], map[string]string{"kind": "quota_exhausted", "result": "delivered"}); got.GetCounter().GetValue() != 2 {
		t.Errorf("events delivered = %v, want 2 (both hosts)", got)
	}
}

func parse(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// find is the family's series with exactly these labels, or nil.
func find(fam *dto.MetricFamily, labels map[string]string) *dto.Metric {
	for _, m := range fam.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}
