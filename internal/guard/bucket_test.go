package guard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/hunter"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RINDA_HUNTER_RATE": "500/m", "RINDA_HUNTER_BURST": "9", "RINDA_HUNTER_COST_USD": "0.01",
		"RINDA_HUNTER_BILL_MISSES": "true", "RINDA_HUNTER_RATE_SCOPE": "workspace", "RINDA_BREAKER_FAILURES": "3"}
	cfg, err := guard.ConfigFromEnv(func(k string) string { return env[k] }, provider.DefaultLimits("hunter", "findymail"))
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Limits("hunter")
	if h.Rate.Interval() != 120*time.Millisecond || h.Burst != 9 || h.CostUSD != 0.01 || !h.BillMisses || !h.PerWorkspace {
		t.Errorf("hunter limits from env: %+v", h)
	}
	if cfg.Limits("findymail") != provider.DefaultLimits("findymail")["findymail"] || cfg.FailureThreshold != 3 {
		t.Errorf("defaults not kept: %+v", cfg)
	}
	env["RINDA_HUNTER_BURST"] = "lots"
	if _, err := guard.ConfigFromEnv(func(k string) string { return env[k] }, provider.DefaultLimits("hunter")); err == nil {
		t.Error("a bad burst was accepted")
	}
}

// Two ticks (separate pools) share Hunter's bucket: the guard never grants
// more than rate + burst slots in any one-second window, and no request
// reaches the stand-in before its slot. (Not the stand-in's own window: on
// a loaded machine requests delayed after their slots bunch there, which
// no client can prevent. Nor a count of requests in a fixed 1.5 s: the
// consumers run until they have pressed the bucket for a few seconds.)
func TestBucketTwoConsumersNeverExceedRatePlusBurst(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	leads := newLeads(t, db.Pool, ws, 1)
	srv := providertest.NewHunter()
	defer srv.Close()
	finder, err := hunter.Descriptor.NewFinder(func(k string) string { return srv.Env(providertest.KeyDefault)[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	const rate, burst = 10, 3
	cfg := guard.Config{Providers: map[string]providerspec.Limits{"hunter": {Rate: providerspec.Rate{Count: rate, Per: time.Second}, Burst: burst}}}

	// Three seconds of the bucket's pace; the deadline only guards a hang.
	const want = 3 * (rate + burst)
	stop := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for consumer := range 2 {
		pool, err := store.Open(context.Background(), store.Config{URL: db.URL, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		g := guard.New(pool, cfg, nil)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for srv.Count() < want && time.Now().Before(stop) {
					c := enrich.Call{TickID: "tick", WorkspaceID: ws, Provider: "hunter", LeadID: leads[0]}
					a, err := g.Admit(context.Background(), c)
					if err != nil {
						t.Error(consumer, err)
						return
					}
					if !a.Allowed {
						time.Sleep(time.Until(a.Until))
						continue
					}
					_, ferr := finder.FindEmail(context.Background(), enrich.Lead{FirstName: "Ada", LastName: "Lovelace", Domain: "example.test"})
					res := enrich.CallResult{Outcome: enrich.CallFound}
					if ferr != nil {
						pe, _ := enrich.AsProviderError(ferr)
						res = enrich.CallResult{Outcome: enrich.CallFailed, Err: pe}
					}
					if err := g.Settle(context.Background(), a, res); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	if n := srv.Count(); n < want {
		t.Fatalf("only %d requests in a minute: the consumers did not press the bucket", n)
	}
	slots := grantedSlots(t, db.Pool, "hunter")
	if worst := maxInWindow(slots, time.Second); worst > rate+burst {
		t.Fatalf("the guard granted %d slots in one second, want at most rate+burst = %d", worst, rate+burst)
	}
	callsKeptTheirSlots(t, srv.Requests(), slots)
}

func TestBucketRefusesBeyondWaitWithDueTime(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 1)
	// 1/m with burst 1: the first call goes, the second is a minute away,
	// far beyond the wait bound.
	g := guard.New(db.Pool, guard.Config{Providers: map[string]providerspec.Limits{"hunter": {Rate: providerspec.Rate{Count: 1, Per: time.Minute}, Burst: 1}}}, nil)
	before := time.Now()
	first := admit(t, g, call(ws, 1, "hunter"))
	if !first.Allowed {
		t.Fatalf("first call: %+v", first)
	}
	second := admit(t, g, call(ws, 1, "hunter"))
	after := time.Now()
	if second.Allowed || second.Reason != guard.ReasonRateLimited {
		t.Fatalf("second call: %+v, want rate_limited", second)
	}
	// A minute after the first admission, which a loaded machine may have
	// made anywhere between before and after (a second of slack for the
	// database's clock against ours).
	if second.Until.Before(before.Add(time.Minute-time.Second)) || second.Until.After(after.Add(time.Minute+time.Second)) {
		t.Fatalf("due at %s, want a minute after the first admission (made between %s and %s)", second.Until, before, after)
	}
	var n int
	if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM provider_calls").Scan(&n); err != nil || n != 1 {
		t.Fatalf("ledger rows = %d (%v), want 1: a refused call reserves nothing", n, err)
	}
}

// A call admitted with a wait for its token is made, even when a sibling
// call was refused meanwhile (rate_limited, due after this one's token):
// the guard's admission is newer than the tick's memory of the refusal,
// and skipping would burn the token without a request.
func TestTickMakesEveryCallTheBucketAdmitted(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	set := providertest.StartAll()
	defer set.Close()
	ws := newWorkspace(t, db.Pool, "acme")
	newDueLeads(t, db.Pool, ws, 60)
	finder, err := provider.NewFinder("hunter", set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(db.Pool, guard.Config{Providers: map[string]providerspec.Limits{"hunter": {Rate: providerspec.Rate{Count: 10, Per: time.Second}, Burst: 1}}}, nil)
	// 60 leads need 6 s at 10/s: a 3 s deadline refuses the later ones
	// (their slots past it) while earlier ones wait for theirs, with room
	// for a loaded machine's slow start (at 1.5 s it could admit fewer
	// than the 5 the test needs).
	if _, err := enrich.RunTick(context.Background(), db.Pool, enrich.TickConfig{
		Finders: []enrich.Finder{finder}, Guard: g, Concurrency: 25, MaxDuration: 3 * time.Second, TickID: "bucket",
	}); err != nil {
		t.Fatal(err)
	}
	var admitted, skipped int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE outcome = 'skipped') FROM provider_calls`).Scan(&admitted, &skipped); err != nil {
		t.Fatal(err)
	}
	if skipped != 0 || set.Hunter.Count() != admitted || admitted < 5 || admitted >= 60 {
		t.Fatalf("%d calls admitted, %d skipped, %d made: want every admitted call made, at least 5 in 3s at 10/s, and not all 60", admitted, skipped, set.Hunter.Count())
	}
}

// An admission whose token wait is cut short (SIGTERM) made no call: its
// reservation is refunded as skipped, not recorded as a failed request.
func TestCutTokenWaitIsASkippedCall(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 2)
	g := guard.New(db.Pool, guard.Config{Providers: map[string]providerspec.Limits{"hunter": {Rate: providerspec.Rate{Count: 2, Per: time.Second}, Burst: 1}}}, nil)
	settle(t, g, admit(t, g, call(ws, 1, "hunter")), enrich.CallResult{Outcome: enrich.CallFound})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if a, err := g.Admit(ctx, call(ws, 2, "hunter")); err == nil {
		t.Fatalf("admission with its wait cut short: got %+v, want the context's error", a)
	}
	var state, outcome string
	if err := db.Pool.QueryRow(context.Background(), `SELECT state, outcome FROM provider_calls WHERE lead_id = 2`).Scan(&state, &outcome); err != nil {
		t.Fatal(err)
	}
	if state != "refunded" || outcome != "skipped" {
		t.Fatalf("ledger row %s/%s, want refunded/skipped", state, outcome)
	}
}
