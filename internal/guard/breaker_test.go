package guard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// unlimited has no bucket and no price, so only the breaker decides.
var unlimited = guard.Config{Providers: map[string]providerspec.Limits{"findymail": {}, "hunter": {}}}

func call(ws, lead int64, provider string) enrich.Call {
	return enrich.Call{TickID: "tick-test", WorkspaceID: ws, Provider: provider, LeadID: lead}
}

func quotaErr() enrich.CallResult {
	return enrich.CallResult{Outcome: enrich.CallFailed, Err: &enrich.ProviderError{Provider: "findymail", Kind: enrich.KindQuota, Status: 402}}
}

func admit(t *testing.T, g *guard.Guard, c enrich.Call) enrich.Admission {
	t.Helper()
	a, err := g.Admit(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func settle(t *testing.T, g *guard.Guard, a enrich.Admission, res enrich.CallResult) {
	t.Helper()
	if err := g.Settle(context.Background(), a, res); err != nil {
		t.Fatal(err)
	}
}

func TestBreakerQuotaOpensProbeClosesEpisodeAlertsOnce(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20) // ids 1..20
	g := guard.New(db.Pool, unlimited, nil)

	a := admit(t, g, call(ws, 1, "findymail"))
	if !a.Allowed || a.Probe {
		t.Fatalf("closed breaker: got %+v, want a plain allowed call", a)
	}
	settle(t, g, a, quotaErr())

	blocked := admit(t, g, call(ws, 2, "findymail"))
	if blocked.Allowed || blocked.Reason != guard.ReasonBreakerOpen {
		t.Fatalf("after quota: got %+v, want breaker_open", blocked)
	}
	if d := time.Until(blocked.Until); d < 4*time.Minute || d > 6*time.Minute {
		t.Fatalf("breaker open for %s, want about QuotaOpenDefault (5m)", d)
	}
	if other := admit(t, g, call(ws, 2, "hunter")); !other.Allowed {
		t.Fatalf("hunter must stay callable while findymail's breaker is open: %+v", other)
	}

	// Expired: one probe; it fails with quota again and re-opens the
	// breaker within the same episode (no second alert).
	expireBreaker(t, db.Pool, ws, "findymail")
	probe := admit(t, g, call(ws, 3, "findymail"))
	if !probe.Allowed || !probe.Probe {
		t.Fatalf("expired breaker: got %+v, want the probe", probe)
	}
	if second := admit(t, g, call(ws, 4, "findymail")); second.Allowed {
		t.Fatalf("a second caller got through while the probe is out: %+v", second)
	}
	settle(t, g, probe, quotaErr())
	if again := admit(t, g, call(ws, 5, "findymail")); again.Allowed {
		t.Fatalf("failed probe must re-open the breaker: %+v", again)
	}

	// Expired again: the probe succeeds and closes the breaker.
	expireBreaker(t, db.Pool, ws, "findymail")
	probe = admit(t, g, call(ws, 6, "findymail"))
	if !probe.Probe {
		t.Fatalf("want a probe, got %+v", probe)
	}
	settle(t, g, probe, enrich.CallResult{Outcome: enrich.CallNotFound})
	if after := admit(t, g, call(ws, 7, "findymail")); !after.Allowed || after.Probe {
		t.Fatalf("after a successful probe: got %+v, want a plain allowed call", after)
	}

	for kind, want := range map[string]int{"quota_exhausted": 1, "breaker_opened": 1, "breaker_closed": 1} {
		if got := eventCount(t, db.Pool, kind); got != want {
			t.Errorf("%s events = %d, want %d (one per episode)", kind, got, want)
		}
	}

	alerts := func() (n int) {
		if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE alert`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := alerts(); got != 1 {
		t.Errorf("%d alert events for one episode, want 1 (quota_exhausted; the rest only listed)", got)
	}

	// A new quota answer starts episode 2 with its own alert.
	a = admit(t, g, call(ws, 8, "findymail"))
	settle(t, g, a, quotaErr())
	if got := eventCount(t, db.Pool, "quota_exhausted"); got != 2 || alerts() != 2 {
		t.Errorf("quota_exhausted events after a second episode = %d (%d alerts), want 2 and 2", got, alerts())
	}
}

func TestBreakerQuotaWindowHonoursRetryAfterAndReset(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20) // ids 1..20
	g := guard.New(db.Pool, unlimited, nil)

	a := admit(t, g, call(ws, 1, "findymail"))
	settle(t, g, a, enrich.CallResult{Outcome: enrich.CallFailed, Err: &enrich.ProviderError{
		Provider: "findymail", Kind: enrich.KindQuota, RetryAfter: 2 * time.Hour}})
	b := admit(t, g, call(ws, 2, "findymail"))
	if d := time.Until(b.Until); d < 119*time.Minute || d > 121*time.Minute {
		t.Fatalf("Retry-After 2h: breaker open for %s", d)
	}

	a = admit(t, g, call(ws, 1, "hunter"))
	settle(t, g, a, enrich.CallResult{Outcome: enrich.CallFailed, Err: &enrich.ProviderError{
		Provider: "hunter", Kind: enrich.KindQuota, ResetAt: time.Now().Add(72 * time.Hour)}})
	b = admit(t, g, call(ws, 2, "hunter"))
	if d := time.Until(b.Until); d < 71*time.Hour || d > 73*time.Hour {
		t.Fatalf("reset in 72h: breaker open for %s", d)
	}
}

func TestBreakerOpensAfterConsecutiveTransientFailures(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20) // ids 1..20
	cfg := unlimited
	cfg.FailureThreshold = 3
	g := guard.New(db.Pool, cfg, nil)
	unavailable := enrich.CallResult{Outcome: enrich.CallFailed, Err: &enrich.ProviderError{Provider: "hunter", Kind: enrich.KindUnavailable, Status: 502}}

	// Two failures, a clean answer, two failures: the streak restarted.
	for i, res := range []enrich.CallResult{unavailable, unavailable, {Outcome: enrich.CallFound}, unavailable, unavailable} {
		a := admit(t, g, call(ws, int64(i), "hunter"))
		if !a.Allowed {
			t.Fatalf("call %d refused: %+v", i, a)
		}
		settle(t, g, a, res)
	}
	a := admit(t, g, call(ws, 10, "hunter"))
	settle(t, g, a, unavailable) // third in a row
	b := admit(t, g, call(ws, 11, "hunter"))
	if b.Allowed || b.Reason != guard.ReasonBreakerOpen {
		t.Fatalf("after 3 consecutive failures: %+v, want breaker_open", b)
	}
	if d := time.Until(b.Until); d > 70*time.Second {
		t.Fatalf("transient window %s, want about TransientOpenDefault (1m)", d)
	}
	if eventCount(t, db.Pool, "breaker_opened") != 1 || eventCount(t, db.Pool, "quota_exhausted") != 0 {
		t.Fatal("transient opening must write breaker_opened only")
	}
}

// Issue 29: calls the tick cut (a signal, its deadline) teach the breaker
// nothing: the failure streak neither grows nor restarts, the ledger row
// is refunded, and a cut probe frees the probe for the next caller.
func TestCancelledCallsLeaveTheStreakAlone(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20)
	cfg := unlimited
	cfg.FailureThreshold = 3
	g := guard.New(db.Pool, cfg, nil)
	unavailable := enrich.CallResult{Outcome: enrich.CallFailed, Err: &enrich.ProviderError{Provider: "hunter", Kind: enrich.KindUnavailable, Status: 502}}
	cancelled := enrich.CallResult{Outcome: enrich.CallCancelled, Err: &enrich.ProviderError{Provider: "hunter", Kind: enrich.KindCancelled}}

	settle(t, g, admit(t, g, call(ws, 1, "hunter")), unavailable)
	settle(t, g, admit(t, g, call(ws, 2, "hunter")), unavailable)
	for i := int64(3); i <= 10; i++ {
		settle(t, g, admit(t, g, call(ws, i, "hunter")), cancelled)
	}
	var failures, refunded int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT consecutive_failures FROM breakers WHERE provider = 'hunter' AND state = 'closed'),
		(SELECT count(*) FROM provider_calls WHERE outcome = 'cancelled' AND state = 'refunded')`).Scan(&failures, &refunded); err != nil {
		t.Fatal(err)
	}
	if failures != 2 || refunded != 8 || eventCount(t, db.Pool, "breaker_opened") != 0 {
		t.Fatalf("after 2 failures and 8 cut calls: streak %d, %d cut calls refunded; want the streak at 2, 8 refunded, no breaker_opened", failures, refunded)
	}
	// The streak goes on where the provider left it.
	settle(t, g, admit(t, g, call(ws, 11, "hunter")), unavailable)
	if b := admit(t, g, call(ws, 12, "hunter")); b.Allowed || b.Reason != guard.ReasonBreakerOpen {
		t.Fatalf("after the third real failure: %+v, want breaker_open", b)
	}
	expireBreaker(t, db.Pool, ws, "hunter")
	probe := admit(t, g, call(ws, 13, "hunter"))
	if !probe.Allowed || !probe.Probe {
		t.Fatalf("expired breaker: got %+v, want the probe", probe)
	}
	settle(t, g, probe, cancelled)
	if next := admit(t, g, call(ws, 14, "hunter")); !next.Allowed || !next.Probe {
		t.Fatalf("after a cut probe: got %+v, want the next caller to probe", next)
	}
}

// Eight ticks on separate connection pools race for an expired breaker:
// exactly one gets the probe.
func TestHalfOpenEightRacingTicksOneProbe(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20) // ids 1..20
	if _, err := guard.OpenBreaker(context.Background(), db.Pool, ws, "findymail", time.Minute, "manual"); err != nil {
		t.Fatal(err)
	}
	expireBreaker(t, db.Pool, ws, "findymail")

	const ticks = 8
	guards := make([]*guard.Guard, ticks)
	for i := range guards {
		pool, err := store.Open(context.Background(), store.Config{URL: db.URL, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		guards[i] = guard.New(pool, unlimited, nil)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]enrich.Admission, ticks)
	errs := make([]error, ticks)
	for i := range ticks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = guards[i].Admit(context.Background(), enrich.Call{
				TickID: fmt.Sprintf("tick-%d", i), WorkspaceID: ws, Provider: "findymail", LeadID: int64(i + 1)})
		}()
	}
	close(start)
	wg.Wait()
	probes := 0
	for i, a := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if a.Allowed {
			probes++
			if !a.Probe {
				t.Errorf("tick %d was admitted without being the probe", i)
			}
		} else if a.Reason != guard.ReasonBreakerOpen || !a.Until.After(time.Now()) {
			t.Errorf("tick %d refused with %q until %s, want breaker_open in the future", i, a.Reason, a.Until)
		}
	}
	if probes != 1 {
		t.Fatalf("%d ticks got the probe, want exactly 1", probes)
	}
}

func TestOperatorOpenAndReset(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 20) // ids 1..20
	g := guard.New(db.Pool, unlimited, nil)
	ctx := context.Background()

	until, err := guard.OpenBreaker(ctx, db.Pool, ws, "hunter", time.Hour, "manual")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(until); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("open --for 1h gave %s", d)
	}
	if a := admit(t, g, call(ws, 1, "hunter")); a.Allowed {
		t.Fatal("an operator-opened breaker let a call through")
	}
	closed, err := guard.ResetBreaker(ctx, db.Pool, ws, "hunter", "manual reset")
	if err != nil || !closed {
		t.Fatalf("reset: closed=%v err=%v", closed, err)
	}
	if a := admit(t, g, call(ws, 1, "hunter")); !a.Allowed {
		t.Fatalf("after reset: %+v", a)
	}
	if again, _ := guard.ResetBreaker(ctx, db.Pool, ws, "hunter", "manual reset"); again {
		t.Fatal("resetting a closed breaker reported a change")
	}
	if eventCount(t, db.Pool, "breaker_opened") != 1 || eventCount(t, db.Pool, "breaker_closed") != 1 {
		t.Fatal("want one breaker_opened and one breaker_closed")
	}
}

// A probe admitted but never made (the tick learned of a quota meanwhile,
// or its token wait was cut short) frees the probe: the next caller probes
// at once instead of waiting out the probe lease.
func TestSkippedProbeFreesTheProbe(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ws := newWorkspace(t, db.Pool, "acme")
	newLeads(t, db.Pool, ws, 3)
	g := guard.New(db.Pool, unlimited, nil)
	settle(t, g, admit(t, g, call(ws, 1, "findymail")), quotaErr())
	expireBreaker(t, db.Pool, ws, "findymail")

	probe := admit(t, g, call(ws, 2, "findymail"))
	if !probe.Allowed || !probe.Probe {
		t.Fatalf("expired breaker: got %+v, want the probe", probe)
	}
	settle(t, g, probe, enrich.CallResult{Outcome: enrich.CallSkipped})
	if next := admit(t, g, call(ws, 3, "findymail")); !next.Allowed || !next.Probe {
		t.Fatalf("after a skipped probe: got %+v, want the next caller to probe", next)
	}
}
