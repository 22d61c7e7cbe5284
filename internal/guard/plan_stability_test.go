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
// One tick of 2,000 calls on statistics taken while they were empty; the
// bucket is set wide so the tick takes seconds (pacing has its own tests).
func TestEnrichTickReadsNoGrowingTablePerCall(t *testing.T) {
	t.Parallel()
	const n = 2000
	db, set := dueLeadsHunterFinds(t, n)
	ctx := context.Background()
	scans := storetest.CountSeqScans(t, db.Pool, db.URL)
	finder, err := provider.NewFinder("hunter", set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RINDA_HUNTER_RATE": "5000/s", "RINDA_HUNTER_BURST": "5000"}
	cfg, err := guard.ConfigFromEnv(func(k string) string { return env[k] }, provider.DefaultLimits("hunter"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := enrich.RunTick(ctx, scans.Pool, enrich.TickConfig{
		Finders: []enrich.Finder{finder}, Guard: guard.New(scans.Pool, cfg, nil), TickID: "plans", MaxDuration: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcomes.Enriched != n {
		t.Fatalf("tick: %+v, want %d enriched", rep.Outcomes, n)
	}
	// Only the tables the tick grows: leads and lead_enrichment keep their
	// size, so a plan made at the start still fits them (the planner may
	// well hash-join a batch against a small table).
	for table, read := range scans.SeqScanReads(t, "provider_calls", "events") {
		if read > 3*n {
			t.Errorf("%s: sequential scans read %d rows during a tick of %d calls (a scan per call or per group)", table, read, n)
		}
	}
}
