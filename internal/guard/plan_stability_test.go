package guard_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The enrichment twin of the email tick's TestTickReadsNoGrowingTablePerRow:
// the spend ledger (provider_calls) and the outbox grow a row per call
// during a tick, and a plan cached while they were small scanned the whole
// ledger for every call it settled (605,542 rows read for 2,000 calls).
// The same worst case, made on purpose so no load changes it: a warm-up
// tick of a few calls plans every statement on one connection while the
// ledger and the outbox are empty, once for good; then they get a history
// of old rows, and a tick of n calls runs on those plans. A scan of either
// per call or per group reads the history each time; the tick may look at
// a table whole once or twice. The bucket is set wide so the tick takes
// seconds (pacing has its own tests).
func TestEnrichTickReadsNoGrowingTablePerCall(t *testing.T) {
	t.Parallel()
	const warm, n, history = 20, 400, 5000
	db, set := dueLeadsHunterFinds(t, warm+n)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	// Only warm leads are due for the warm-up; the others were there
	// before it (a tick never adds leads), due after it.
	exec(`UPDATE lead_enrichment SET next_attempt_at = now() + interval '1 hour'
		WHERE lead_id NOT IN (SELECT lead_id FROM lead_enrichment ORDER BY lead_id LIMIT $1)`, warm)
	tables := []string{"provider_calls", "events"}
	scans := storetest.CountStalePlanScans(t, db.Pool, db.URL, tables...)
	finder, err := provider.NewFinder("hunter", set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RINDA_HUNTER_RATE": "5000/s", "RINDA_HUNTER_BURST": "5000"}
	cfg, err := guard.ConfigFromEnv(func(k string) string { return env[k] }, provider.DefaultLimits("hunter"))
	if err != nil {
		t.Fatal(err)
	}
	tick := func(id string, want int) {
		t.Helper()
		rep, err := enrich.RunTick(ctx, scans.Pool, enrich.TickConfig{
			Finders: []enrich.Finder{finder}, Guard: guard.New(scans.Pool, cfg, nil), TickID: id, MaxDuration: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcomes.Enriched != want {
			t.Fatalf("tick: %+v, want %d enriched", rep.Outcomes, want)
		}
	}
	tick("warm-up", warm)
	// Two months ago: the month's spend stays the tick's own.
	exec(`INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, outcome, tick_id, created_at, settled_at)
		SELECT w.id, 'hunter', 'settled', 0.01, 'found', 'old', now() - interval '60 days', now() - interval '60 days'
		FROM workspaces w, generate_series(1, $1) WHERE w.name = 'acme'`, history)
	exec(`INSERT INTO events (kind, workspace_id, provider, dedupe_key, created_at, delivered_at)
		SELECT 'quota_exhausted', w.id, 'hunter', 'old-' || g, now() - interval '60 days', now() - interval '60 days'
		FROM workspaces w, generate_series(1, $1) g WHERE w.name = 'acme'`, history)
	exec(`UPDATE lead_enrichment SET next_attempt_at = now() - interval '1 second' WHERE status = 'pending'`)
	scans.Reset(t)
	tick("plans", n)
	for table, r := range scans.Reads(t, tables...) {
		var rows int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		bound := 3 * rows
		t.Logf("%s: sequential scans read %d rows, index scans fetched %d; it holds %d (bound %d each)", table, r.Seq, r.Index, rows, bound)
		if r.Seq > bound || r.Index > bound {
			t.Errorf("%s: a tick of %d calls read %d rows by sequential scans and fetched %d by index scans; it holds %d: a scan per call or group on a plan made while it was small",
				table, n, r.Seq, r.Index, rows)
		}
	}
}
