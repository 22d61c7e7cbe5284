package guard_test

import (
	"context"
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

// Issue 30 (bench width): every admission writes two rows all of a
// workspace's calls share, the provider's bucket and the month's spend.
// With each worker of each tick sending its own, Postgres queued one
// backend per worker on those rows (a 25-worker tick: 25), and from 4
// processes on the convoy cost more than another process added: 8 enrich
// processes did fewer calls per second than 4. A guard now sends one
// admission at a time per workspace × provider: while the bucket row is
// held, at most one of its 25 workers waits in Postgres.
func TestAdmitQueuesOneBackendPerGuardOnSharedRows(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ws := newWorkspace(t, db.Pool, "acme")
	leads := newLeads(t, db.Pool, ws, 26)
	cfg := guard.Config{Providers: map[string]providerspec.Limits{
		"findymail": {Rate: providerspec.Rate{Count: 1000, Per: time.Second}, Burst: 1000, CostUSD: 0.01},
	}}
	pool, err := store.Open(ctx, store.Config{URL: db.URL, MaxConns: 30, LockTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	g := guard.New(pool, cfg, nil)
	call := func(lead int64) enrich.Call {
		return enrich.Call{TickID: "tick-test", WorkspaceID: ws, Provider: "findymail", LeadID: lead}
	}
	settle(t, g, admit(t, g, call(leads[0])), enrich.CallResult{Outcome: enrich.CallFound}) // the bucket and spend rows exist

	holder, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, `SELECT 1 FROM rate_limits WHERE key = 'findymail' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	admissions := make(chan enrich.Admission, len(leads)-1)
	for _, lead := range leads[1:] {
		wg.Go(func() {
			a, err := g.Admit(ctx, call(lead))
			if err != nil {
				t.Error(err)
			}
			admissions <- a
		})
	}
	waiting := func() int {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testkit.Eventually(t, "an admission to wait for the held bucket", func() bool { return waiting() > 0 })
	// What must never happen, looked for a while: a second backend of
	// this guard queued on the row.
	most := 0
	for range 50 {
		most = max(most, waiting())
		time.Sleep(10 * time.Millisecond)
	}
	if most != 1 {
		t.Errorf("%d backends of one guard queued on the bucket row at once, want 1", most)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(admissions)
	n := 0
	for a := range admissions {
		if a.Allowed {
			n++
			settle(t, g, a, enrich.CallResult{Outcome: enrich.CallFound})
		}
	}
	if n != len(leads)-1 {
		t.Errorf("%d of %d admissions allowed once the row was free", n, len(leads)-1)
	}
}
