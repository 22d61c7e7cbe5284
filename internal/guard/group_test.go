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
	"github.com/rindactl/rindactl/internal/testkit"
)

// Issue 26: calls of one workspace and provider admitted in one statement
// are admitted as if one after another: the leading run that fits the
// ceiling and the bucket, each with its own slot and ledger row; the rest
// refused for the right reason, with nothing consumed for them.
func TestAdmitGroupIsAdmissionsInOrder(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	leads := newLeads(t, db.Pool, ws, 6)
	if _, err := store.SetWorkspaceCeiling(ctx, db.Pool, "acme", ptr(0.35), "test"); err != nil {
		t.Fatal(err)
	}
	calls := func(horizon time.Duration) []store.GuardAdmitCall {
		var cs []store.GuardAdmitCall
		for _, l := range leads {
			cs = append(cs, store.GuardAdmitCall{LeadID: l, ProbeOwner: fmt.Sprint("t/", l), Horizon: horizon})
		}
		return cs
	}

	// The ceiling: three $0.10 calls fit under $0.35, the fourth does not.
	p := store.GuardAdmitParams{WorkspaceID: ws, Provider: "findymail", TickID: "t", ProbeLease: time.Minute, CostUSD: 0.10}
	rows, err := store.GuardAdmit(ctx, db.Pool, p, calls(0))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, r := range rows {
		switch {
		case i < 3 && (r.CallID == nil || !*r.UnderCeiling):
			t.Errorf("call %d: %+v, want admitted", i, r)
		case i >= 3 && (r.CallID != nil || *r.UnderCeiling):
			t.Errorf("call %d: %+v, want refused at the ceiling", i, r)
		case r.CallID != nil:
			ids = append(ids, *r.CallID)
		}
	}
	var spent float64
	var ledger, events int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT spent_usd::float8 FROM workspace_spend), (SELECT count(*) FROM provider_calls),
		(SELECT count(*) FROM events WHERE kind = 'ceiling_reached')`).Scan(&spent, &ledger, &events); err != nil {
		t.Fatal(err)
	}
	if spent < 0.2999 || spent > 0.3001 || ledger != 3 || events != 1 {
		t.Errorf("spent $%.4f, %d ledger rows, %d ceiling_reached events; want $0.30, 3 rows, 1 event", spent, ledger, events)
	}
	// Each admitted call has its own ledger row, for its own lead.
	for i, id := range ids {
		var lead int64
		if err := db.Pool.QueryRow(ctx, `SELECT lead_id FROM provider_calls WHERE id = $1`, id).Scan(&lead); err != nil || lead != leads[i] {
			t.Errorf("call %d's ledger row %d is lead %d (%v), want %d", i, id, lead, err, leads[i])
		}
	}

	// The bucket: burst 2 and no wait accepted; the third call's slot is a
	// minute away. Free calls, so the ceiling plays no part.
	p = store.GuardAdmitParams{WorkspaceID: ws, Provider: "hunter", TickID: "t", ProbeLease: time.Minute,
		BucketKey: "hunter", Interval: time.Minute}
	rows, err = store.GuardAdmit(ctx, db.Pool, p, calls(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		admitted := r.CallID != nil
		if admitted != (i < 2) || r.TAT == nil {
			t.Fatalf("hunter call %d: %+v, want the first two admitted, each row with a tat", i, r)
		}
		if i == 1 && !r.TAT.After(*rows[0].TAT) {
			t.Errorf("the two admitted calls share the slot %s", r.TAT)
		}
		if i >= 2 && (r.Granted == nil || *r.Granted || !*r.UnderCeiling) {
			t.Errorf("hunter call %d: %+v, want refused for its token", i, r)
		}
	}
	if n := queryInt(t, db.Pool, `SELECT count(*) FROM provider_calls WHERE provider = 'hunter'`); n != 2 {
		t.Errorf("%d hunter ledger rows, want 2: a refused call reserves nothing", n)
	}

	// The probe: only the first call of the group claims it; the others
	// wait for its verdict.
	if _, err := guard.OpenBreaker(ctx, db.Pool, ws, "millionverifier", time.Minute, "manual"); err != nil {
		t.Fatal(err)
	}
	expireBreaker(t, db.Pool, ws, "millionverifier")
	p = store.GuardAdmitParams{WorkspaceID: ws, Provider: "millionverifier", TickID: "t", ProbeLease: time.Minute}
	rows, err = store.GuardAdmit(ctx, db.Pool, p, calls(0))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if want := map[bool]string{true: "probe", false: "open"}[i == 0]; r.Breaker != want || (r.CallID != nil) != (i == 0) {
			t.Errorf("millionverifier call %d: breaker %s, admitted %v; want %s", i, r.Breaker, r.CallID != nil, want)
		}
		if i > 0 && (r.ProbeUntil == nil || !r.ProbeUntil.After(r.Now)) {
			t.Errorf("millionverifier call %d: probe until %v, want the probe's lease", i, r.ProbeUntil)
		}
	}
}

// holdRow locks one row in a transaction of its own until release is
// called, so admissions queue behind it.
func holdRow(t *testing.T, db *storetest.DB, lock string, args ...any) (release func()) {
	t.Helper()
	tx, err := db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), lock, args...); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = tx.Rollback(context.Background()) }) }
	t.Cleanup(release)
	return release
}

// Calls that queue while an admission waits are admitted in one statement
// (its group), and under a ceiling and across two processes the spend
// still never passes it: each statement locks the month's spend row.
func TestGroupedAdmissionsNeverPassTheCeiling(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	leads := newLeads(t, db.Pool, ws, 40)
	if _, err := store.SetWorkspaceCeiling(ctx, db.Pool, "acme", ptr(1.00), "test"); err != nil {
		t.Fatal(err)
	}
	cfg := guard.Config{Providers: map[string]providerspec.Limits{"findymail": {CostUSD: 0.10}}}
	first := guard.New(db.Pool, cfg, nil)
	settle(t, first, admit(t, first, call(ws, leads[0], "findymail")), enrich.CallResult{Outcome: enrich.CallFound}) // spend row exists: $0.10
	guards := []*guard.Guard{first}
	for range 1 {
		pool, err := store.Open(ctx, store.Config{URL: db.URL, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		guards = append(guards, guard.New(pool, cfg, nil))
	}

	release := holdRow(t, db, `SELECT 1 FROM workspace_spend WHERE workspace_id = $1 FOR UPDATE`, ws)
	var wg sync.WaitGroup
	results := make(chan enrich.Admission, len(leads)-1)
	for i, lead := range leads[1:] {
		g := guards[i%len(guards)]
		wg.Go(func() {
			a, err := g.Admit(ctx, enrich.Call{TickID: fmt.Sprint("tick-", i%len(guards)), WorkspaceID: ws, Provider: "findymail", LeadID: lead})
			if err != nil {
				t.Error(err)
			}
			results <- a
		})
	}
	// Each process has one statement waiting for the row; the other calls
	// wait in their groups.
	testkit.Eventually(t, "both processes' admissions to wait for the spend row", func() bool {
		return queryInt(t, db.Pool, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`) == len(guards)
	})
	release()
	wg.Wait()
	close(results)
	admitted := 0
	for a := range results {
		if a.Allowed {
			admitted++
		} else if a.Reason != guard.ReasonCeilingReached {
			t.Errorf("refused with %q, want ceiling_reached", a.Reason)
		}
	}
	var spent float64
	if err := db.Pool.QueryRow(ctx, `SELECT spent_usd::float8 FROM workspace_spend`).Scan(&spent); err != nil {
		t.Fatal(err)
	}
	ledger := queryInt(t, db.Pool, `SELECT count(*) FROM provider_calls`)
	if admitted != 9 || spent > 1.0001 || ledger != 10 {
		t.Errorf("%d more calls admitted, $%.2f spent, %d ledger rows; want 9 more, $1.00 at most, 10 rows", admitted, spent, ledger)
	}
}

// Settles that queue behind one another are written in one statement: each
// ledger row gets its own state, every refund goes back to the spend and
// each billed find is kept with its lead.
func TestGroupedSettlesKeepEveryFindAndRefund(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	newDueLeads(t, db.Pool, ws, 30)
	leads := storetest.Column[int64](t, db.Pool, `SELECT id FROM leads ORDER BY id`)
	g := guard.New(db.Pool, guard.Config{Providers: map[string]providerspec.Limits{"findymail": {CostUSD: 0.10}}}, nil)
	var adms []enrich.Admission
	for _, l := range leads {
		adms = append(adms, admit(t, g, call(ws, l, "findymail")))
	}

	release := holdRow(t, db, `SELECT 1 FROM provider_calls WHERE id = $1 FOR UPDATE`, adms[0].Ref)
	var wg sync.WaitGroup
	for i, a := range adms {
		res := enrich.CallResult{Outcome: enrich.CallNotFound} // findymail bills no miss: refunded
		if i%2 == 0 {
			res = enrich.CallResult{Outcome: enrich.CallFound, Found: fmt.Sprintf("lead%d@example.test", i)}
		}
		wg.Go(func() { settle(t, g, a, res) })
	}
	testkit.Eventually(t, "a settle to wait for the held ledger row", func() bool {
		return queryInt(t, db.Pool, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`) == 1
	})
	release()
	wg.Wait()

	var settled, refunded, kept int
	var spent float64
	if err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM provider_calls WHERE state = 'settled' AND outcome = 'found'),
		(SELECT count(*) FROM provider_calls WHERE state = 'refunded' AND outcome = 'not_found'),
		(SELECT count(*) FROM lead_enrichment WHERE found_email LIKE 'lead%' AND found_by = 'findymail'),
		(SELECT spent_usd::float8 FROM workspace_spend)`).Scan(&settled, &refunded, &kept, &spent); err != nil {
		t.Fatal(err)
	}
	if settled != 15 || refunded != 15 || kept != 15 || spent < 1.4999 || spent > 1.5001 {
		t.Errorf("%d settled, %d refunded, %d finds kept, $%.4f spent; want 15, 15, 15 and $1.50", settled, refunded, kept, spent)
	}
}

func queryInt(t *testing.T, db store.DBTX, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
