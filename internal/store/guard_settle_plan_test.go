package store_test

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 30: at 8 enrichment processes a settle read 78 buffers per lead,
// three times what it read at one. Its generic plan, made while few calls
// were in flight, found a group's ledger rows through the partial index of
// reserved calls (migration 00021), reading every entry in it — the calls
// in flight and the settled ones vacuum had not yet removed: 7,566 entries
// and 187 rows for a group of 20. A settle reaches its calls by key.
func TestGuardSettleReachesItsCallsByKey(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	reserve := func(n int) []int64 {
		t.Helper()
		return storetest.Column[int64](t, db.Pool, `
			INSERT INTO provider_calls (workspace_id, provider, cost_usd)
			SELECT w.id, 'findymail', 0.01 FROM workspaces w, generate_series(1, $1::int)
			RETURNING id`, n)
	}
	settle := func(pool store.Batcher, ids []int64) {
		t.Helper()
		calls := make([]store.GuardSettleCall, len(ids))
		for i, id := range ids {
			calls[i] = store.GuardSettleCall{CallID: id, State: "settled", Outcome: "not_found", Clean: true}
		}
		if err := store.GuardSettle(ctx, pool, 1, "findymail", calls); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO workspaces (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'acme')`); err != nil {
		t.Fatal(err)
	}
	// A young ledger, a few calls in flight: the settle's plan is made
	// now and kept (one connection, generic plans).
	settle(db.Pool, reserve(2000))
	warm := reserve(10)
	scans := storetest.CountStalePlanScans(t, db.Pool, db.URL, "provider_calls")
	settle(scans.Pool, warm[:5])

	// Thousands of calls in flight; a group of 20 settles.
	inFlight := reserve(3000)
	scans.Reset(t)
	settle(scans.Pool, inFlight[:20])
	r := scans.Reads(t, "provider_calls")["provider_calls"]
	if r.Seq+r.Index > 100 {
		t.Errorf("settling 20 calls with 3,000 in flight read %d ledger rows (%d by sequential scans, %d fetched by index scans), want about 20",
			r.Seq+r.Index, r.Seq, r.Index)
	}
}
