package enrich_test

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/testkit"
)

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 1)
	e.set.Findymail.RateLimit(time.Now().Add(5 * time.Minute).UTC().Format(http.TimeFormat))
	rep := e.tick(t, e.config(t, "findymail"))
	r := e.row(t, ids[0])
	if rep.Outcomes.Pending != 1 || r.DueIn < 4*time.Minute || r.DueIn > time.Hour {
		t.Fatalf("lead %+v: want pending, due no sooner than the HTTP-date (~5 min)", r)
	}
}

func TestMillionVerifierErrorIn200(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 2)
	e.set.MillionVerifier.SetMode(providertest.ModeQuotaExhausted) // HTTP 200, resultcode 4
	cfg := e.config(t, "hunter", "findymail")
	cfg.Verifier = e.verifier(t)
	rep := e.tick(t, cfg)
	r := e.row(t, ids[0])
	if rep.Outcomes.Unreachable != 2 || r.Provider != "millionverifier" || r.Email != "" {
		t.Fatalf("report %+v, lead %+v: a 200 carrying an error is the verifier's quota, not a verdict", rep.Outcomes, r)
	}
	// Without the verifier no address is accepted, so Findymail is not asked.
	if n := e.set.Findymail.Count(); n != 0 {
		t.Fatalf("findymail got %d calls, want 0", n)
	}
	// Hunter's find is paid for: it is kept, with its source, to be
	// verified when the verifier is back (issue 24).
	var held, by string
	if err := e.db.Pool.QueryRow(t.Context(), `SELECT coalesce(found_email, ''), coalesce(found_by, '') FROM lead_enrichment WHERE lead_id = $1`, ids[0]).Scan(&held, &by); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(held, "ada") || !strings.Contains(r.LastError, held) || by != "hunter" || !strings.Contains(r.LastError, "verify pending") {
		t.Fatalf("kept %q by %q, last error %q: want hunter's address kept, verify pending", held, by, r.LastError)
	}
}

func TestVerifyUndeliverableTriesNextProvider(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 1)
	e.set.Findymail.SetDirectory(func(_, _, domain string) (string, bool) { return "guess@" + domain, true })
	e.set.Hunter.SetDirectory(func(_, _, domain string) (string, bool) { return "ada@" + domain, true })
	e.set.MillionVerifier.SetVerdicts(func(email string) enrich.Verdict {
		if strings.HasPrefix(email, "guess@") {
			return enrich.VerdictInvalid
		}
		return enrich.VerdictOK
	})
	cfg := e.config(t, "findymail", "hunter")
	cfg.Verifier = e.verifier(t)
	rep := e.tick(t, cfg)
	r := e.row(t, ids[0])
	if rep.Outcomes.Enriched != 1 || r.Email != "ada@co0.example" || r.Provider != "hunter" {
		t.Fatalf("lead %+v: want hunter's verified address after findymail's undeliverable one", r)
	}
	if rep.ProviderCalls["millionverifier"] != 2 {
		t.Fatalf("verifier calls %d, want 2", rep.ProviderCalls["millionverifier"])
	}
}

func TestProviderAnsweringHTML502(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 1)
	e.set.Hunter.SetMode(providertest.ModeServerError)
	rep := e.tick(t, e.config(t, "hunter"))
	r := e.row(t, ids[0])
	if rep.Outcomes.Pending != 1 || r.Attempts != 1 || !strings.Contains(r.LastError, "unavailable") || r.DueIn > time.Hour {
		t.Fatalf("lead %+v: a 502 page is transient: pending with backoff", r)
	}
	if strings.Contains(r.LastError, "<html") {
		t.Fatalf("last_error carries the HTML page: %q", r.LastError)
	}
}

func TestLeadWithoutDomainMakesNoCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The importer refuses such leads; older data may still hold them.
	ids := seedLeads(t, e.db, "acme", []store.LeadImport{
		{ExternalID: "nodomain", FirstName: "Ada", LastName: "Lovelace", Domain: "x.example"},
		{ExternalID: "noname", FirstName: "Ada", Domain: "x.example"},
	})
	if _, err := e.db.Pool.Exec(context.Background(), `UPDATE leads SET company_domain = CASE external_id WHEN 'nodomain' THEN '' ELSE company_domain END,
		first_name = CASE external_id WHEN 'noname' THEN '' ELSE first_name END`); err != nil {
		t.Fatal(err)
	}
	rep := e.tick(t, e.config(t, "findymail", "hunter"))
	if rep.Outcomes.NotFound != 2 || e.set.Findymail.Count()+e.set.Hunter.Count() != 0 {
		t.Fatalf("report %+v: want 2 not_found without any call", rep)
	}
	if r := e.row(t, ids[0]); !strings.Contains(r.LastError, "invalid lead") {
		t.Fatalf("lead %+v: last_error should say why", r)
	}
}

func TestTwoTicksNeverProcessTheSameLead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The two ticks share Hunter's bucket (8/s): ~10 s of work.
	const n = 80
	e.seed(t, "acme", n)
	e.set.Hunter.SetLatency(2 * time.Millisecond)
	var wg sync.WaitGroup
	reps := make([]enrich.Report, 2)
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := e.config(t, "hunter")
			cfg.Batch = 15
			reps[i] = e.tick(t, cfg)
		}()
	}
	wg.Wait()
	if reps[0].Claimed+reps[1].Claimed != n {
		t.Fatalf("claimed %d + %d, want %d in total", reps[0].Claimed, reps[1].Claimed, n)
	}
	for lead, c := range perLead(e.set.Hunter.Requests()) {
		if c != 1 {
			t.Errorf("%s asked %d times", lead, c)
		}
	}
	if e.set.Hunter.Count() != n {
		t.Fatalf("hunter got %d calls, want %d", e.set.Hunter.Count(), n)
	}
}

func TestKilledTickLeadsClaimableAfterLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.seed(t, "acme", 5)
	// A tick claimed and was killed (no release). Its lease is long enough
	// to outlast the next tick's start on a loaded machine (a 200 ms one
	// could run out before it); time then passes it.
	if _, err := store.ClaimEnrichment(ctx, e.db.Pool, store.EnrichClaim{TickID: "killed", Batch: 5, Lease: time.Minute, TickStarted: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if rep := e.tick(t, e.config(t, "hunter")); rep.Claimed != 0 {
		t.Fatalf("claimed %d leads under a live lease", rep.Claimed)
	}
	if _, err := e.db.Pool.Exec(ctx, `UPDATE lead_enrichment SET locked_until = now() - interval '1 second',
		next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second' WHERE locked_by = 'killed'`); err != nil {
		t.Fatal(err)
	}
	rep := e.tick(t, e.config(t, "hunter"))
	if rep.Claimed != 5 || rep.Outcomes.Enriched+rep.Outcomes.NotFound != 5 {
		t.Fatalf("after the lease: %+v; want the 5 leads back and answered", rep)
	}
}

// Issue 39: a stop (SIGTERM) ends new calls, not answers on their way: the
// call in flight hangs, the stop waits for it up to the call timeout, then
// settles it in doubt (its request went out: Hunter may bill it) and the
// lead is not sent to Hunter again before the in-doubt wait. The leads not
// started go back uncharged and due.
func TestCancelledTickReleasesLeadsUncharged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 20)
	e.set.Hunter.SetMode(providertest.ModeSlow)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for e.set.Hunter.Count() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel() // SIGTERM while the first call hangs
	}()
	cfg := e.config(t, "hunter")
	cfg.CallTimeout = 500 * time.Millisecond
	rep, err := enrich.RunTick(ctx, e.db.Pool, cfg)
	if err != nil {
		t.Fatalf("a cancelled tick must still record and succeed: %v", err)
	}
	if rep.Claimed != 20 || rep.Outcomes.Pending != 20 || e.set.Hunter.Count() != 1 {
		t.Fatalf("report %+v, %d requests: want all 20 back as pending, one call made", rep, e.set.Hunter.Count())
	}
	doubted := 0
	for _, id := range ids {
		r := e.row(t, id)
		switch {
		case r.inDoubt():
			doubted++
		case r.Status != lead.Pending || r.Attempts != 0 || r.DueIn > 0 || len(r.DoubtedBy) != 0:
			t.Fatalf("lead %+v: want pending, uncharged, due at once", r)
		}
	}
	if got := e.ledgerOutcomes(t); doubted != 1 || got["settled/in_doubt"] != 1 || len(got) != 1 {
		t.Errorf("%d leads in doubt, ledger %v: want the hung call's lead in doubt, its call settled in doubt (billed)", doubted, got)
	}
	var finished bool
	var exit int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT finished_at IS NOT NULL, exit_status FROM tick_runs WHERE kind = 'enrich'`).Scan(&finished, &exit); err != nil {
		t.Fatal(err)
	}
	if !finished || exit != 0 {
		t.Fatalf("tick_runs: finished %v exit %d, want a recorded clean stop", finished, exit)
	}
}

// Issue 39: answers that reach the tick after a SIGTERM are paid for and
// kept: each call in flight at the signal is settled as what it was (found
// or not found), its lead recorded, and nothing is refunded that Hunter
// answered. Before the fix the signal cut them: recorded cancelled and
// refunded, the leads released, and the next tick asked Hunter again.
func TestStopKeepsAnswersInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 40)
	// Answers take a second: the signal comes while calls wait for theirs.
	e.set.Hunter.SetLatency(time.Second)
	cfg := e.guardedHunter(t, map[string]string{"RINDA_HUNTER_RATE": "off"})
	cfg.Concurrency = 5
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The first call answers alone (slow start); then five go out.
		for e.set.Hunter.Count() < 4 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	rep, err := enrich.RunTick(ctx, e.db.Pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	asked := e.set.Hunter.Count()
	counts := e.counts(t)
	ledger := e.ledgerOutcomes(t)
	answered := ledger["settled/found"] + ledger["refunded/not_found"] + ledger["settled/not_found"]
	if rep.ProviderCalls["hunter"] != asked || answered != asked || counts[lead.Enriched]+counts[lead.NotFound] != asked {
		t.Errorf("%d requests reached Hunter, the tick counts %d; ledger %v; leads %v: want every answer settled as what it was and its lead recorded",
			asked, rep.ProviderCalls["hunter"], ledger, counts)
	}
	if n := ledger["refunded/cancelled"] + ledger["settled/in_doubt"]; n != 0 {
		t.Errorf("ledger %v: %d calls Hunter answered were cut", ledger, n)
	}
	if counts[lead.Pending] != 40-asked {
		t.Errorf("leads %v: want the %d not called back as pending", counts, 40-asked)
	}
}

func TestExhaustedProvider500Leads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 500)
	e.set.Hunter.SetMode(providertest.ModeQuotaExhausted)
	cfg := e.config(t, "hunter")
	e.tick(t, cfg)
	for lead, n := range perLead(e.set.Hunter.Requests()) {
		if n > 1 {
			t.Errorf("%s reached hunter %d times", lead, n)
		}
	}
	calls := e.set.Hunter.Count()
	if rep := e.tick(t, cfg); rep.Claimed != 0 || e.set.Hunter.Count() != calls {
		t.Fatalf("second tick claimed %d and made %d calls, want none", rep.Claimed, e.set.Hunter.Count()-calls)
	}
	if c := e.counts(t); c[lead.EnrichmentFailed] != 0 || c[lead.Unreachable] != 500 {
		t.Fatalf("states %v: want 500 unreachable, none failed", c)
	}
}

func TestRejectedKeyDisablesProviderForTheTick(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 20)
	e.set.Findymail.SetKeys("another-key")
	rep := e.tick(t, e.config(t, "findymail", "hunter"))
	if n := e.set.Findymail.Count(); n != 1 {
		t.Fatalf("findymail got %d calls after refusing the key, want 1", n)
	}
	// A provider with a refused key counts as absent: hunter's misses are
	// final, not retried until someone fixes the key.
	if rep.Outcomes.Enriched+rep.Outcomes.NotFound != 20 || rep.Outcomes.NotFound == 0 {
		t.Fatalf("outcomes %+v: hunter should serve every lead", rep.Outcomes)
	}
	logs := e.log.String()
	if strings.Count(logs, "refused our credentials") != 1 || strings.Contains(logs, providertest.KeyDefault) {
		t.Fatalf("want one error line for the refused key and no key in logs:\n%s", logs)
	}
}

// blockingGuard refuses one provider until a fixed time, as an open breaker
// (or, with reason, another guard) would, and counts what it settles.
type blockingGuard struct {
	provider string
	until    time.Time
	reason   string
	cause    string
	mu       sync.Mutex
	settled  map[string]int
}

func (g *blockingGuard) Admit(_ context.Context, c enrich.Call) (enrich.Admission, error) {
	if c.Provider == g.provider {
		return enrich.Admission{Call: c, Until: g.until, Reason: cmp.Or(g.reason, "breaker_open"), Cause: g.cause}, nil
	}
	return enrich.Admission{Call: c, Allowed: true}, nil
}

func (g *blockingGuard) Settle(_ context.Context, a enrich.Admission, _ enrich.CallResult) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.settled[a.Call.Provider]++
	return nil
}

func TestGuardBlockSkipsProviderWithoutFailing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 10)
	g := &blockingGuard{provider: "findymail", until: time.Now().Add(7 * time.Minute), cause: "quota_exhausted", settled: map[string]int{}}
	cfg := e.config(t, "findymail", "hunter")
	cfg.Guard = g
	rep := e.tick(t, cfg)
	// Behind a quota breaker, Hunter's misses wait a day for Findymail
	// rather than end not_found.
	if e.set.Findymail.Count() != 0 || rep.Outcomes.Enriched+rep.Outcomes.Unreachable != 10 || rep.Outcomes.Enriched < 5 || g.settled["hunter"] != 10 {
		t.Fatalf("report %+v, settled %v: findymail skipped, hunter serves all", rep, g.settled)
	}
	// Behind a breaker that is only a wait (7 minutes, no quota), they wait
	// for its end instead (issue 24).
	e3 := newEnv(t)
	e3.seed(t, "acme", 10)
	cfg = e3.config(t, "findymail", "hunter")
	cfg.Guard = &blockingGuard{provider: "findymail", until: time.Now().Add(7 * time.Minute), cause: "unavailable", settled: map[string]int{}}
	rep = e3.tick(t, cfg)
	if rep.Outcomes.Enriched+rep.Outcomes.Pending != 10 || rep.Outcomes.Unreachable != 0 || rep.Outcomes.Pending == 0 {
		t.Fatalf("report %+v: hunter's misses wait for the short breaker, none is parked", rep)
	}

	// Every provider blocked: the lead waits for the block's end, uncharged.
	e2 := newEnv(t)
	ids := e2.seed(t, "acme", 3)
	cfg = e2.config(t, "findymail")
	cfg.Guard = &blockingGuard{provider: "findymail", until: time.Now().Add(7 * time.Minute), settled: map[string]int{}}
	rep = e2.tick(t, cfg)
	r := e2.row(t, ids[0])
	if rep.Outcomes.Pending != 3 || r.Attempts != 0 || r.DueIn < 6*time.Minute || r.DueIn > 8*time.Minute {
		t.Fatalf("lead %+v: want pending until the block ends, attempts refunded", r)
	}
	if strings.Count(e2.log.String(), "blocked by guard") != 1 {
		t.Fatalf("want one warn line for the block (then the tick remembers it):\n%s", e2.log.String())
	}
}

// Issue 14: a rate block (the provider's next token lies beyond the tick)
// never parks a lead in the negative cache, whatever the other providers
// said: Findymail out of credits and Hunter's bucket empty left 4,985 leads
// unreachable for a day, although Hunter could serve them within seconds.
func TestRateBlockNeverParksALead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 20)
	e.set.Findymail.SetMode(providertest.ModeQuotaExhausted)
	cfg := e.config(t, "findymail", "hunter")
	cfg.Guard = &blockingGuard{provider: "hunter", reason: enrich.ReasonRateLimited, until: time.Now().Add(2 * time.Minute), settled: map[string]int{}}
	rep := e.tick(t, cfg)
	r := e.row(t, ids[5])
	if rep.Outcomes.Pending != 20 || r.Attempts != 0 || r.CacheIn != nil || r.DueIn < time.Minute || r.DueIn > 3*time.Minute || r.Provider != "hunter" {
		t.Fatalf("report %+v, lead %+v: want every lead pending until Hunter's slot, uncharged, not negatively cached", rep, r)
	}

	// The other way round: Findymail rate-blocked, Hunter missing. The
	// misses wait for Findymail's slot instead of a day.
	e2 := newEnv(t)
	e2.seed(t, "acme", 20)
	cfg = e2.config(t, "findymail", "hunter")
	cfg.Guard = &blockingGuard{provider: "findymail", reason: enrich.ReasonRateLimited, until: time.Now().Add(2 * time.Minute), settled: map[string]int{}}
	rep = e2.tick(t, cfg)
	if rep.Outcomes.Unreachable != 0 || rep.Outcomes.Enriched+rep.Outcomes.Pending != 20 || rep.Outcomes.Pending == 0 {
		t.Fatalf("report %+v: want Hunter's finds enriched and its misses pending for Findymail, none unreachable", rep)
	}
}

func TestMaxDurationReleasesUnstartedLeads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 60
	e.seed(t, "acme", n)
	// One at a time, 200ms each: the 60 leads would need 12s. The 3s
	// deadline leaves a loaded machine's slow start time for a first call.
	e.set.Hunter.SetLatency(200 * time.Millisecond)
	cfg := e.config(t, "hunter")
	cfg.Concurrency = 1
	cfg.MaxDuration = 3 * time.Second
	rep := e.tick(t, cfg)
	worked := rep.Outcomes.Enriched + rep.Outcomes.NotFound
	if worked == 0 || worked == n || worked+rep.Outcomes.Pending != n {
		t.Fatalf("outcomes %+v: want some worked and the rest released", rep.Outcomes)
	}
	var charged int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lead_enrichment WHERE status = 'pending' AND attempts > 0`).Scan(&charged); err != nil || charged != 0 {
		t.Fatalf("%d released leads were charged an attempt (%v)", charged, err)
	}
	if e.set.Hunter.Count() != worked {
		t.Fatalf("hunter calls %d != worked leads %d", e.set.Hunter.Count(), worked)
	}
}

// heldFinder holds its second call until a third has been made (or a few
// seconds have passed), and answers "not found" to every call. The first
// call answers at once: until a pair has answered, its calls go one at a
// time (slow start).
type heldFinder struct {
	mu       sync.Mutex
	calls    int
	more     chan struct{}
	released bool // the second call saw the third, not the timeout
}

func (f *heldFinder) Name() string { return "held" }

func (f *heldFinder) FindEmail(ctx context.Context, _ enrich.Lead) (enrich.Finding, error) {
	f.mu.Lock()
	f.calls++
	held := f.calls == 2
	if f.calls == 3 {
		close(f.more)
	}
	f.mu.Unlock()
	if held {
		select {
		case <-f.more:
			f.mu.Lock()
			f.released = true
			f.mu.Unlock()
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
		}
	}
	return enrich.Finding{}, nil
}

// A slow lead must not hold up the next batch: with batches of 2 and 2
// workers, the worker done with the first lead goes on to the next batch
// while the second lead's call still hangs.
func TestSlowLeadDoesNotHoldUpTheNextBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 4)
	f := &heldFinder{more: make(chan struct{})}
	cfg := e.config(t)
	cfg.Finders = []enrich.Finder{f}
	cfg.Batch, cfg.Concurrency = 2, 2
	rep := e.tick(t, cfg)
	if rep.Claimed != 4 || rep.Outcomes.NotFound != 4 {
		t.Fatalf("report %+v: want 4 claimed, 4 not found", rep)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.released {
		t.Fatal("the next batch waited for the first batch's slowest lead")
	}
}

// Issue 14: a call in flight at MaxDuration may finish, but is cut
// CallTimeout later, so a lease longer than MaxDuration + CallTimeout
// never lets another tick take a lead whose call is still running. Without
// the cut the call would run into the provider's 20 s HTTP timeout and be
// charged as a transient failure. Issue 39: its request went out, so
// Hunter may bill it: the lead is uncharged but in doubt, not sent to
// Hunter again before the in-doubt wait.
func TestCallStillRunningAfterMaxDurationIsCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 1)
	e.set.Hunter.SetLatency(time.Minute) // stalled
	cfg := e.config(t, "hunter")
	// A deadline a loaded machine's claim and admission cannot outlast
	// (at 300 ms the call was not always made).
	cfg.MaxDuration, cfg.CallTimeout = 2*time.Second, 300*time.Millisecond
	rep := e.tick(t, cfg)
	r := e.row(t, ids[0])
	if rep.Outcomes.Pending != 1 || !r.inDoubt() || e.set.Hunter.Count() != 1 {
		t.Fatalf("report %+v, lead %+v: want the call cut and the lead uncharged, in doubt", rep, r)
	}
}

// guardedHunter is a tick over the Hunter stand-in with env on top of
// the stand-in's (RINDA_HUNTER_TIMEOUT, RINDA_BREAKER_FAILURES, ...), the
// Postgres guard read from the same environment and the adapter logging to
// e.log.
func (e *env) guardedHunter(t *testing.T, env map[string]string) enrich.TickConfig {
	t.Helper()
	getenv := func(k string) string { return cmp.Or(env[k], e.set.Getenv(k)) }
	log := slog.New(slog.NewJSONHandler(e.log, nil))
	f, err := provider.NewFinder("hunter", getenv, provider.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	gcfg, err := guard.ConfigFromEnv(getenv, provider.DefaultLimits("hunter"))
	if err != nil {
		t.Fatal(err)
	}
	return enrich.TickConfig{Finders: []enrich.Finder{f}, Guard: guard.New(e.db.Pool, gcfg, nil), Logger: log, MaxDuration: 30 * time.Second}
}

// breakerOf is the (state, failure streak, breaker_opened events) of
// provider's breaker, ("closed", 0, n) when it has no row.
func (e *env) breakerOf(t *testing.T, provider string) (state string, failures, opened int) {
	t.Helper()
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT
		coalesce((SELECT state FROM breakers WHERE provider = $1), 'closed'),
		coalesce((SELECT consecutive_failures FROM breakers WHERE provider = $1), 0),
		(SELECT count(*) FROM events WHERE kind = 'breaker_opened')`, provider).Scan(&state, &failures, &opened); err != nil {
		t.Fatal(err)
	}
	return state, failures, opened
}

// Issue 29: calls cut by the tick's own deadline say nothing about the
// provider. Calls hang past MaxDuration and are cut CallTimeout later, long
// before the adapter's HTTP timeout (20 s): they count toward no breaker
// streak, the leads go back uncharged and due, and the log says the tick
// cut them and why. Before the fix each cut call counted as a transient
// failure: five of them opened Hunter's breaker. Issue 39: the cut calls'
// requests went out, so their leads are in doubt rather than due.
func TestCallsCutAtMaxDurationLeaveBreakerClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.seed(t, "acme", 30)
	e.set.Hunter.HoldAfter(1) // the first call answers, the rest hang
	cfg := e.guardedHunter(t, map[string]string{"RINDA_HUNTER_RATE": "off"})
	// Long enough for a loaded machine to have a breaker's streak of calls
	// hanging before the cut.
	cfg.MaxDuration, cfg.CallTimeout = 3*time.Second, 500*time.Millisecond
	rep := e.tick(t, cfg)

	cut := e.set.Hunter.Count() - 1
	if cut < 5 || rep.Outcomes.Pending != 29 {
		t.Fatalf("report %+v after %d cut calls: want at least a breaker's streak (5) cut and 29 leads back", rep, cut)
	}
	if state, failures, opened := e.breakerOf(t, "hunter"); state != "closed" || failures != 0 || opened != 0 {
		t.Errorf("breaker %s with %d failures, %d breaker_opened events; want closed with none", state, failures, opened)
	}
	doubted := 0
	for _, id := range ids {
		r := e.row(t, id)
		switch {
		case r.inDoubt():
			doubted++
		case r.Status == lead.Pending && (r.Attempts != 0 || r.DueIn > 0 || r.LastError != ""):
			t.Fatalf("lead %+v: want pending, uncharged, due as before, or in doubt", r)
		}
	}
	if doubted != cut {
		t.Errorf("%d leads in doubt, want the %d whose calls were cut", doubted, cut)
	}
	logs := e.log.String()
	if n := strings.Count(logs, `"msg":"call cancelled by the tick"`); n != cut || !strings.Contains(logs, "--max-duration") || strings.Contains(logs, "provider call blocked") {
		t.Errorf("%d of %d cut calls logged as cancelled by the tick with the deadline as cause:\n%s", n, cut, logs)
	}
}

// ...while a provider that really times out (RINDA_HUNTER_TIMEOUT reached
// with the tick's time left) still fails transiently and opens the breaker
// after the configured streak.
func TestProviderTimeoutStillOpensBreaker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 30)
	e.set.Hunter.HoldAfter(1)
	cfg := e.guardedHunter(t, map[string]string{"RINDA_HUNTER_TIMEOUT": "200ms", "RINDA_HUNTER_RATE": "off", "RINDA_BREAKER_FAILURES": "3"})
	e.tick(t, cfg)

	if state, _, opened := e.breakerOf(t, "hunter"); state != "open" || opened != 1 {
		t.Errorf("breaker %s with %d breaker_opened events; want open once", state, opened)
	}
	var timedOut int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM lead_enrichment
		WHERE status = 'pending' AND attempts = 1 AND last_error LIKE '%no answer within 200ms%'`).Scan(&timedOut); err != nil || timedOut < 3 {
		t.Errorf("%d leads charged a transient timeout (%v), want at least the streak (3)", timedOut, err)
	}
	if strings.Contains(e.log.String(), "call cancelled by the tick") {
		t.Errorf("a provider timeout was logged as cancelled by the tick:\n%s", e.log.String())
	}
}

// gateFinder answers its first call at once (so slow start fans out) and
// holds every later one until a token on pass lets it answer "not found",
// or the tick's context ends it.
type gateFinder struct {
	calls, held atomic.Int32
	pass        chan struct{}
}

func (f *gateFinder) Name() string { return "gate" }

func (f *gateFinder) FindEmail(ctx context.Context, _ enrich.Lead) (enrich.Finding, error) {
	if f.calls.Add(1) == 1 {
		return enrich.Finding{}, nil
	}
	f.held.Add(1)
	defer f.held.Add(-1)
	select {
	case <-f.pass:
		return enrich.Finding{}, nil
	case <-ctx.Done():
		return enrich.Finding{}, ctx.Err()
	}
}

// Issue 29: once outcomes cannot be recorded (the database is lost), calls
// in flight would be paid for and their answers lost: the tick cuts them at
// once, and they count as cancelled, not as the provider's failures.
// Before the fix they ran on to the tick's deadline (here a minute away)
// and then counted as transient failures.
func TestUnrecordableOutcomesCutCallsAsCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(t, "acme", 30)
	f := &gateFinder{pass: make(chan struct{})}
	gcfg, err := guard.ConfigFromEnv(func(string) string { return "" }, provider.DefaultLimits(f.Name()))
	if err != nil {
		t.Fatal(err)
	}
	// The guard keeps its own (working) pool: what it learns is checked.
	cfg := enrich.TickConfig{Finders: []enrich.Finder{f}, Guard: guard.New(e.db.Pool, gcfg, nil), Concurrency: 10,
		MaxDuration: time.Minute, CallTimeout: time.Minute, Logger: slog.New(slog.NewJSONHandler(e.log, nil))}
	done := make(chan error, 1)
	go func() {
		_, err := enrich.RunTick(context.Background(), e.db.TickPool(t), cfg)
		done <- err
	}()
	testkit.Eventually(t, "10 calls held and the first outcome recorded", func() bool {
		return f.held.Load() == 10 && e.counts(t)[lead.NotFound] == 1
	})
	if _, err := e.db.Pool.Exec(context.Background(), `CREATE FUNCTION lost() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk lost'; END $$;
		CREATE TRIGGER lost BEFORE UPDATE ON lead_enrichment FOR EACH ROW EXECUTE FUNCTION lost()`); err != nil {
		t.Fatal(err)
	}
	// Per row: the guard's settle, which would keep a find with its lead,
	// updates no lead for a miss and still records the calls.
	f.pass <- struct{}{} // one answer whose outcome cannot be written
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "disk lost") {
			t.Fatalf("tick error %v, want outcomes not recorded", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the tick kept its calls running after its outcomes could not be recorded")
	}
	var cancelled, failed int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE outcome = 'cancelled' AND state = 'refunded'),
		count(*) FILTER (WHERE outcome NOT IN ('cancelled', 'not_found')) FROM provider_calls`).Scan(&cancelled, &failed); err != nil {
		t.Fatal(err)
	}
	// Nine held calls, and maybe the next one of the worker that answered.
	if cancelled < 9 || failed != 0 {
		var calls []string
		rows, _ := e.db.Pool.Query(context.Background(), `SELECT coalesce(outcome, 'null') || '/' || state FROM provider_calls ORDER BY id`)
		for rows.Next() {
			var c string
			rows.Scan(&c)
			calls = append(calls, c)
		}
		t.Errorf("provider_calls: %d cancelled and refunded, %d otherwise failed; want every cut call (9 or more) cancelled\n%s", cancelled, failed, strings.Join(calls, "\n"))
	}
	if state, failures, _ := e.breakerOf(t, f.Name()); state != "closed" || failures != 0 {
		t.Errorf("breaker %s with %d failures, want closed with none", state, failures)
	}
}
