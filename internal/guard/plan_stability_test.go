package guard_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
)

// The enrichment twin of the email tick's TestTickReadsNoGrowingTablePerRow:
// the spend ledger (provider_calls) and the outbox grow a row per call
// during a tick, and a plan cached while they were small scanned the whole
// ledger for every call it settled (400,732 rows read for 2,000 calls).
// One tick of 2,000 calls on statistics taken while they were empty; the
// bucket is set wide so the tick takes seconds (pacing has its own tests).
func TestEnrichTickReadsNoGrowingTablePerCall(t *testing.T) {
	t.Parallel()
	const n = 2000
	db, set := dueLeadsHunterFinds(t, n)
	ctx := context.Background()
	for _, q := range []string{`ANALYZE`, `SELECT pg_stat_reset()`} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// Its own pool: a backend reports its table statistics when it exits.
	pool, err := store.Open(ctx, store.Config{URL: db.URL, MaxConns: 10, ApplicationName: "plan-test"})
	if err != nil {
		t.Fatal(err)
	}
	finder, err := provider.NewFinder("hunter", set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RINDA_HUNTER_RATE": "5000/s", "RINDA_HUNTER_BURST": "5000"}
	cfg, err := guard.ConfigFromEnv(func(k string) string { return env[k] }, "hunter")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := enrich.RunTick(ctx, pool, enrich.TickConfig{
		Finders: []enrich.Finder{finder}, Guard: guard.New(pool, cfg, nil), TickID: "plans", MaxDuration: time.Minute,
	})
	pool.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcomes.Enriched != n {
		t.Fatalf("tick: %+v, want %d enriched", rep.Outcomes, n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var backends int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'plan-test'`).Scan(&backends); err != nil {
			t.Fatal(err)
		}
		if backends == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tick's connections did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Only the tables the tick grows: leads and lead_enrichment keep their
	// size, so a plan made at the start still fits them (the planner may
	// well hash-join a batch against a small table).
	for _, table := range []string{"provider_calls", "events"} {
		var read int
		if err := db.Pool.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&read); err != nil {
			t.Fatal(err)
		}
		if read > 3*n {
			t.Errorf("%s: sequential scans read %d rows during a tick of %d calls (a scan per call or per group)", table, read, n)
		}
	}
}
