package guard_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 14's acceptance: with the default buckets (Hunter 8/s, burst 7)
// and a working Hunter, one tick on 200 due leads enriches all 200 (about
// 25 s), its calls reach 0.9 x (burst + rate x the time they took), and it
// never goes over the bucket. Before the fix the tick enriched 15 in 1 s
// and gave the rest back. The figure itself is in docs/benchmarks.md.
//
// Both bounds are read from the slots the guard granted (the ledger's
// call_at), not from wall time: the tick's start-up and last records, and
// when a loaded machine lets each request reach the stand-in, move with
// load (under CI's two busy loops the tick's duration grew past the 0.9,
// and requests delayed after their slots bunched in the stand-in's
// window). What the tick controls is that it asks for the next slot while
// earlier calls wait (the slots follow each other at the bucket's
// interval), that no call goes out before its slot, and that the guard
// never grants more than the bucket allows.
func TestTickWorksAtTheBucketsPace(t *testing.T) {
	t.Parallel()
	const n = 200
	rep, lim, set, db := tickAtDefaultBuckets(t, n)
	if rep.Claimed != n || rep.Outcomes.Enriched != n {
		t.Fatalf("one tick: %+v; want all %d claimed and enriched", rep, n)
	}
	slots := grantedSlots(t, db.Pool, "hunter")
	if calls := rep.ProviderCalls["hunter"]; calls != n || len(slots) != n {
		t.Fatalf("%d Hunter calls and %d granted slots; want %d of each", calls, len(slots), n)
	}
	span := slots[len(slots)-1].Sub(slots[0])
	capacity := float64(lim.Burst) + float64(lim.Rate.Count)*span.Seconds()/lim.Rate.Per.Seconds()
	if float64(n) < 0.9*capacity {
		t.Errorf("%d Hunter calls over %s of slots; want at least 0.9 x (burst %d + rate %s x %s) = %.0f: the tick left the bucket idle",
			n, span, lim.Burst, lim.Rate, span, 0.9*capacity)
	}
	if rep.RateWaitMS <= 0 {
		t.Errorf("rate_wait_ms = %d; the calls beyond the burst waited for their slots", rep.RateWaitMS)
	}
	if most := maxInWindow(slots, time.Second); most > lim.Burst+lim.Rate.Count {
		t.Errorf("the guard granted %d slots within one second; the bucket allows %d", most, lim.Burst+lim.Rate.Count)
	}
	callsKeptTheirSlots(t, set.Hunter.Requests(), slots)
	t.Logf("%d leads enriched in %dms (slots over %s), rate_wait_ms %d", n, rep.DurationMS, span, rep.RateWaitMS)
}

// grantedSlots are the times the guard let provider's calls go out (the
// ledger's call_at), earliest first.
func grantedSlots(t testing.TB, pool *pgxpool.Pool, provider string) []time.Time {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT call_at FROM provider_calls WHERE provider = $1 AND call_at IS NOT NULL ORDER BY call_at`, provider)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		t.Fatal(err)
	}
	return slots
}

// maxInWindow is the most of the sorted times within any window of
// length d.
func maxInWindow(times []time.Time, d time.Duration) int {
	best, lo := 0, 0
	for hi := range times {
		for times[hi].Sub(times[lo]) >= d {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// callsKeptTheirSlots fails unless every request reached the stand-in at or
// after a slot of its own: no more requests than slots, and the k-th
// arrival no earlier than the k-th slot (a few ms of slack for the
// stand-in's clock against the database's).
func callsKeptTheirSlots(t testing.TB, reqs []providertest.Request, slots []time.Time) {
	t.Helper()
	if len(reqs) > len(slots) {
		t.Errorf("%d requests reached the stand-in on %d granted slots", len(reqs), len(slots))
		return
	}
	arrivals := make([]time.Time, len(reqs))
	for i, r := range reqs {
		arrivals[i] = r.At
	}
	slices.SortFunc(arrivals, time.Time.Compare)
	for k, at := range arrivals {
		if at.Before(slots[k].Add(-20 * time.Millisecond)) {
			t.Errorf("request %d reached the stand-in at %s, %s before the %d-th slot the guard granted", k+1, at.Format(time.StampMicro), slots[k].Sub(at), k+1)
			return
		}
	}
}

// BenchmarkTickAtDefaultBuckets is docs/benchmarks.md's pacing figure: one
// tick, 200 due leads, the default Hunter bucket, a Hunter stand-in that
// finds every address. It reports the tick's seconds and its calls as a
// share of what the bucket allowed over that time (burst + rate x D).
func BenchmarkTickAtDefaultBuckets(b *testing.B) {
	const n = 200
	for b.Loop() {
		rep, lim, _, _ := tickAtDefaultBuckets(b, n)
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
func tickAtDefaultBuckets(t testing.TB, n int) (enrich.Report, providerspec.Limits, *providertest.Set, *storetest.DB) {
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
	return rep, cfg.Limits("hunter"), set, db
}
