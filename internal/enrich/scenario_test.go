package enrich_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
)

// The memo's seven scenarios (../shared/incident.md), one test each.

func TestS1QuotaExhaustedForGood(t *testing.T) {
	t.Parallel()
	for _, mode := range []providertest.Mode{providertest.ModeQuotaExhausted, providertest.ModeQuota429} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ids := e.seed(t, "acme", 30)
			e.set.Findymail.SetMode(mode)

			rep := e.tick(t, e.config(t, "findymail"))
			if rep.Claimed != 30 || rep.Outcomes.Unreachable != 30 {
				t.Fatalf("report %+v: want 30 claimed, 30 unreachable", rep)
			}
			// Slow start: the first call goes out alone, meets the quota, and
			// the tick sends nothing more.
			if n := e.set.Findymail.Count(); n != 1 {
				t.Fatalf("findymail got %d calls, want 1", n)
			}
			r := e.row(t, ids[7])
			if r.Status != lead.Unreachable || r.CacheIn == nil || *r.CacheIn < 23*time.Hour || r.DueIn != *r.CacheIn {
				t.Fatalf("lead: %+v; want unreachable for a day with next_attempt_at = negative_cache_until", r)
			}
			if r.Attempts != 0 || r.Provider != "findymail" || !strings.Contains(r.LastError, "quota_exhausted") {
				t.Fatalf("lead: %+v; want attempts refunded, provider findymail, a quota error", r)
			}
			// No more retries: the next tick finds nothing due and calls nobody.
			rep = e.tick(t, e.config(t, "findymail"))
			if rep.Claimed != 0 || e.set.Findymail.Count() != 1 {
				t.Fatalf("second tick claimed %d, findymail calls %d; want 0 and still 1", rep.Claimed, e.set.Findymail.Count())
			}
		})
	}
}

func TestS2TemporaryRateLimitBacksOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 4)
	e.set.Findymail.RateLimit("120") // two minutes: transient
	if _, err := e.db.Pool.Exec(context.Background(), `UPDATE lead_enrichment SET attempts = 4 WHERE lead_id = $1`, ids[3]); err != nil {
		t.Fatal(err)
	}

	rep := e.tick(t, e.config(t, "findymail"))
	if rep.Outcomes.Pending != 3 || rep.Outcomes.EnrichmentFailed != 1 {
		t.Fatalf("outcomes %+v: want 3 pending, 1 enrichment_failed (its 5th attempt)", rep.Outcomes)
	}
	r := e.row(t, ids[0])
	if r.Status != lead.Pending || r.Attempts != 1 || r.DueIn < 110*time.Second || r.DueIn > time.Hour {
		t.Fatalf("lead: %+v; want pending, 1 attempt, due after Retry-After (120s) and within the 1h cap", r)
	}
	if !strings.Contains(r.LastError, "rate_limited") {
		t.Fatalf("last_error %q does not name the rate limit", r.LastError)
	}
	if r := e.row(t, ids[3]); r.Status != lead.EnrichmentFailed {
		t.Fatalf("lead at max attempts: %+v, want enrichment_failed", r)
	}
	// The wait passes and the provider is back: the leads are worked again.
	e.set.Findymail.SetMode(providertest.ModeHealthy)
	e.makeDue(t)
	rep = e.tick(t, e.config(t, "findymail"))
	if rep.Claimed != 3 || rep.Outcomes.Enriched+rep.Outcomes.NotFound != 3 {
		t.Fatalf("after recovery: %+v; want the 3 pending leads claimed and answered (not the failed one)", rep)
	}
	if r := e.row(t, ids[0]); r.Attempts != 2 {
		t.Fatalf("attempts %d after the second attempt, want 2", r.Attempts)
	}
	if !strings.Contains(e.log.String(), `"retry_after_ms":120000`) {
		t.Fatalf("no warn line with retry_after_ms=120000 in logs:\n%s", e.log.String())
	}
}

func TestS3EveryProviderLiftsQuotaTheSameWay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		finders []string
		verify  bool
		exhaust func(*providertest.Set)
	}{
		{"hunter 429 too_many_requests", []string{"hunter"}, false, func(s *providertest.Set) { s.Hunter.SetMode(providertest.ModeQuotaExhausted) }},
		{"findymail 402 not enough credits", []string{"findymail"}, false, func(s *providertest.Set) { s.Findymail.SetMode(providertest.ModeQuotaExhausted) }},
		{"millionverifier 200 resultcode 4", []string{"hunter"}, true, func(s *providertest.Set) { s.MillionVerifier.SetMode(providertest.ModeQuotaExhausted) }},
		{"rate limit of 15 minutes", []string{"hunter"}, false, func(s *providertest.Set) { s.Hunter.RateLimit("900") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ids := e.seed(t, "acme", 3)
			tc.exhaust(e.set)
			cfg := e.config(t, tc.finders...)
			if tc.verify {
				cfg.Verifier = e.verifier(t)
			}
			rep := e.tick(t, cfg)
			if rep.Outcomes.Unreachable != 3 {
				t.Fatalf("outcomes %+v: want all 3 unreachable", rep.Outcomes)
			}
			r := e.row(t, ids[0])
			if r.CacheIn == nil || *r.CacheIn < 23*time.Hour || r.Email != "" {
				t.Fatalf("lead %+v: want a day of negative cache and no address", r)
			}
		})
	}
}

func TestS4BurstInOneWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Hunter's default bucket (8/s) sets the pace: 100 leads take ~12 s.
	const n = 100
	ids := e.seed(t, "acme", n)
	e.set.Findymail.SetMode(providertest.ModeQuotaExhausted)

	cfg := e.config(t, "findymail", "hunter")
	cfg.Concurrency = 25
	rep := e.tick(t, cfg)
	if got := e.set.Findymail.Count(); got != 1 {
		t.Fatalf("findymail got %d calls in the burst, want 1", got)
	}
	if got := e.set.Hunter.Count(); got != n {
		t.Fatalf("hunter got %d calls, want one per lead (%d)", got, n)
	}
	misses := 0
	for i := range ids {
		if providertest.IsDefaultMiss(fmtFirst(i), "Lovelace", fmtDomain(i)) {
			misses++
		}
	}
	// Hunter's misses are unreachable, not not_found: Findymail could not
	// be asked, so they are retried when its cache expires.
	want := enrich.Outcomes{Enriched: n - misses, Unreachable: misses}
	if rep.Outcomes != want || rep.ProviderCalls["findymail"] != 1 || rep.ProviderCalls["hunter"] != n {
		t.Fatalf("report %+v, want outcomes %+v", rep, want)
	}
	if c := e.counts(t); c[lead.EnrichmentFailed] != 0 || c[lead.Pending] != 0 {
		t.Fatalf("states %v: nothing may be failed or re-queued", c)
	}
	rep = e.tick(t, cfg)
	if rep.Claimed != 0 || e.set.Findymail.Count() != 1 {
		t.Fatalf("second tick claimed %d and findymail has %d calls: nothing may be re-enqueued", rep.Claimed, e.set.Findymail.Count())
	}
}

func TestS5BillingCycleRenews(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 10)
	e.set.Hunter.SetMode(providertest.ModeQuotaExhausted)
	e.tick(t, e.config(t, "hunter"))
	if c := e.counts(t); c[lead.Unreachable] != 10 {
		t.Fatalf("states %v, want 10 unreachable", c)
	}
	e.set.Hunter.SetMode(providertest.ModeHealthy)
	if rep := e.tick(t, e.config(t, "hunter")); rep.Claimed != 0 {
		t.Fatalf("claimed %d while the negative cache holds, want 0", rep.Claimed)
	}
	e.makeDue(t) // a day later
	rep := e.tick(t, e.config(t, "hunter"))
	if rep.Claimed != 10 || rep.Outcomes.Enriched+rep.Outcomes.NotFound != 10 {
		t.Fatalf("after the cache expired: %+v; want all 10 worked", rep)
	}
	if r := e.row(t, ids[1]); r.CacheIn != nil || (r.Status == lead.Enriched && r.Email == "") {
		t.Fatalf("recovered lead %+v: negative cache must be cleared", r)
	}
}

func TestS6CrashMidBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ids := e.seed(t, "acme", 40)
	// A tick claims 25 leads, records nothing and dies.
	dead, err := store.ClaimEnrichment(ctx, e.db.Pool, store.EnrichClaim{TickID: "crashed", Batch: 25, Lease: time.Minute, TickStarted: time.Now()})
	if err != nil || len(dead) != 25 {
		t.Fatalf("crashed tick claimed %d (%v)", len(dead), err)
	}
	rep := e.tick(t, e.config(t, "hunter"))
	if rep.Claimed != 15 {
		t.Fatalf("a live tick claimed %d, want the 15 unleased leads only", rep.Claimed)
	}
	// The lease runs out: the stalled leads are detected and resumed.
	if _, err := e.db.Pool.Exec(ctx, `UPDATE lead_enrichment SET locked_until = now() - interval '1 s', next_attempt_at = now() - interval '1 s', updated_at = now() - interval '1 s' WHERE locked_by = 'crashed'`); err != nil {
		t.Fatal(err)
	}
	rep = e.tick(t, e.config(t, "hunter"))
	if rep.Claimed != 25 {
		t.Fatalf("after the lease: claimed %d, want the crashed tick's 25", rep.Claimed)
	}
	for lead, n := range perLead(e.set.Hunter.Requests()) {
		if n != 1 {
			t.Errorf("%s was asked %d times, want once", lead, n)
		}
	}
	if e.set.Hunter.Count() != len(ids) {
		t.Fatalf("hunter got %d calls for %d leads", e.set.Hunter.Count(), len(ids))
	}
	// The crashed tick's late write changes nothing.
	n, err := store.RecordEnrichment(ctx, e.db.Pool, "crashed", []store.EnrichOutcome{{LeadID: dead[0].LeadID, Status: "enrichment_failed"}})
	if err != nil || n != 0 {
		t.Fatalf("zombie record wrote %d rows (%v), want 0", n, err)
	}
	if c := e.counts(t); c[lead.Enriched]+c[lead.NotFound] != len(ids) {
		t.Fatalf("states %v, want all %d leads answered", c, len(ids))
	}
}

func TestS7RowsFromOldVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ids := e.seed(t, "acme", 4)
	// What the memo's old worker left behind: a stalled in-progress job, a
	// pending lead with more attempts than the new limit, an expired
	// negative cache, and an enrichment_failed row from the catch-all.
	for i, set := range []string{
		`status = 'in_progress', locked_by = 'worker-v0', locked_until = now() - interval '1 hour', next_attempt_at = now() - interval '1 hour', attempts = 3`,
		`status = 'pending', attempts = 9`,
		`status = 'unreachable', negative_cache_until = now() - interval '1 minute', next_attempt_at = now() - interval '1 minute'`,
		`status = 'enrichment_failed', attempts = 3, last_error = 'internal_error'`,
	} {
		if _, err := e.db.Pool.Exec(ctx, `UPDATE lead_enrichment SET `+set+` WHERE lead_id = $1`, ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	e.set.Findymail.SetMode(providertest.ModeQuota429) // the incident's answer
	rep := e.tick(t, e.config(t, "findymail"))
	if rep.Claimed != 3 || rep.Outcomes.Unreachable != 3 {
		t.Fatalf("report %+v: want the 3 claimable old rows unreachable", rep)
	}
	if r := e.row(t, ids[1]); r.Status != lead.Unreachable || r.Attempts != 9 {
		t.Fatalf("old pending row: %+v; a quota answer must not fail it whatever its attempts", r)
	}
	if r := e.row(t, ids[3]); r.Status != lead.EnrichmentFailed || r.LastError != "internal_error" {
		t.Fatalf("old failed row: %+v; only requeue may revive it", r)
	}
	if n := e.set.Findymail.Count(); n != 1 {
		t.Fatalf("findymail got %d calls, want 1", n)
	}
}

func fmtFirst(i int) string  { return "Ada" + strconv.Itoa(i) }
func fmtDomain(i int) string { return "co" + strconv.Itoa(i) + ".example" }
