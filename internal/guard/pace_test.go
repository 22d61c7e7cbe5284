package guard_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 14's acceptance: with the default buckets (Hunter 8/s, burst 7)
// and a working Hunter, one tick on 200 due leads enriches all 200 (about
// 25 s), its calls reach 0.9 x (burst + rate x duration), and it never
// goes over the bucket. Before the fix the tick enriched 15 in 1 s and
// gave the rest back. The figure itself is in docs/benchmarks.md.
func TestTickWorksAtTheBucketsPace(t *testing.T) {
	t.Parallel()
	const n = 200
	rep, lim, set := tickAtDefaultBuckets(t, n)
	if rep.Claimed != n || rep.Outcomes.Enriched != n {
		t.Fatalf("one tick: %+v; want all %d claimed and enriched", rep, n)
	}
	d := time.Duration(rep.DurationMS) * time.Millisecond
	capacity := float64(lim.Burst) + float64(lim.Rate.Count)*d.Seconds()/lim.Rate.Per.Seconds()
	calls := rep.ProviderCalls["hunter"]
	if calls != n || float64(calls) < 0.9*capacity {
		t.Errorf("%d Hunter calls in %s; want %d, at least 0.9 x (burst %d + rate %s x duration) = %.0f",
			calls, d, n, lim.Burst, lim.Rate, 0.9*capacity)
	}
	if rep.RateWaitMS <= 0 {
		t.Errorf("rate_wait_ms = %d; the calls beyond the burst waited for their slots", rep.RateWaitMS)
	}
	// Slack of a few ms for the stand-in's clock against the database's.
	if most := set.Hunter.MaxInWindow(time.Second - 20*time.Millisecond); most > lim.Burst+lim.Rate.Count {
		t.Errorf("Hunter saw %d calls within one second; the bucket allows %d", most, lim.Burst+lim.Rate.Count)
	}
	t.Logf("%d leads enriched in %s, rate_wait_ms %d", n, d, rep.RateWaitMS)
}

// BenchmarkTickAtDefaultBuckets is docs/benchmarks.md's pacing figure: one
// tick, 200 due leads, the default Hunter bucket, a Hunter stand-in that
// finds every address. It reports the tick's seconds and its calls as a
// share of what the bucket allowed over that time (burst + rate x D).
func BenchmarkTickAtDefaultBuckets(b *testing.B) {
	const n = 200
	for b.Loop() {
		rep, lim, _ := tickAtDefaultBuckets(b, n)
		d := time.Duration(rep.DurationMS) * time.Millisecond
		capacity := float64(lim.Burst) + float64(lim.Rate.Count)*d.Seconds()/lim.Rate.Per.Seconds()
		b.ReportMetric(d.Seconds(), "tick-s")
		b.ReportMetric(float64(rep.Outcomes.Enriched), "enriched")
		b.ReportMetric(float64(rep.ProviderCalls["hunter"])/capacity, "calls/capacity")
	}
}

// dueLeadsHunterFinds is a database with n due leads in workspace acme and
// the provider stand-ins, Hunter finding every address.
func dueLeadsHunterFinds(t testing.TB, n int) (*storetest.DB, *providertest.Set) {
	t.Helper()
	db := storetest.New(t)
	set := providertest.StartAll()
	t.Cleanup(set.Close)
	set.Hunter.SetDirectory(func(first, last, domain string) (string, bool) { return first + "@" + domain, true })
	newDueLeads(t, db.Pool, newWorkspace(t, db.Pool, "acme"), n)
	return db, set
}

// tickAtDefaultBuckets runs one tick over n due leads with Hunter as the
// only finder under the shipped guard defaults.
func tickAtDefaultBuckets(t testing.TB, n int) (enrich.Report, providerspec.Limits, *providertest.Set) {
	t.Helper()
	db, set := dueLeadsHunterFinds(t, n)
	finder, err := provider.NewFinder("hunter", set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := guard.ConfigFromEnv(func(string) string { return "" }, provider.DefaultLimits("hunter"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := enrich.RunTick(context.Background(), db.Pool, enrich.TickConfig{
		Finders: []enrich.Finder{finder}, Guard: guard.New(db.Pool, cfg, nil), TickID: "pace",
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep, cfg.Limits("hunter"), set
}
