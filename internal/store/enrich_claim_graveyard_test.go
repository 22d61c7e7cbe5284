package store_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 30, item 4: the claim's Postgres CPU per row grew with the backlog
// (27 µs at 100k due leads, 48 µs at 5M). A claimed row moves to the end
// of the claim index (its lease) and leaves its entry at the head dead;
// recorded, it leaves the index. Until autovacuum comes (after a fifth of
// the table has died, and never more often than its naptime), every claim
// walked that graveyard from the head: the bigger the table, the bigger
// the graveyard between vacuums. A tick's claim now starts at its last
// batch's latest due time: every due row below it was claimed then (or
// held by another tick, which works it).
//
// After 15,000 of 20,000 leads were claimed and recorded, the next claim
// reads the claim index from the head without a bound (hundreds of pages
// on the old statement), and a few pages with one.
func TestClaimFromItsLastBatchSkipsTheGraveyard(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	// The graveyard is what this test measures: autovacuum (the test has
	// its own database, so only its own tables) must not clear it first,
	// as it did under load.
	if _, err := db.Pool.Exec(ctx, `ALTER TABLE lead_enrichment SET (autovacuum_enabled = off);
		ALTER TABLE leads SET (autovacuum_enabled = off)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		l AS (
			INSERT INTO leads (workspace_id, first_name, last_name, company_domain)
			SELECT w.id, 'F', 'L' || g, 'x' || g || '.example' FROM w, generate_series(1, 20000) g
			RETURNING id, workspace_id
		)
		INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
		SELECT id, workspace_id, now() - interval '1 hour' + id * interval '1 millisecond', now() - interval '1 hour' FROM l;
		ANALYZE leads, lead_enrichment`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var after time.Time
	for range 15 {
		got, err := store.ClaimEnrichment(ctx, db.Pool, store.EnrichClaim{TickID: "t", Batch: 1000, Lease: time.Minute, TickStarted: start, After: after})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1000 {
			t.Fatalf("claimed %d, want 1000", len(got))
		}
		outs := make([]store.EnrichOutcome, len(got))
		for i, l := range got {
			outs[i] = store.EnrichOutcome{LeadID: l.LeadID, Status: lead.NotFound}
			if l.PrevDue.After(after) {
				after = l.PrevDue
			}
		}
		if _, err := store.RecordEnrichment(ctx, db.Pool, "t", outs); err != nil {
			t.Fatal(err)
		}
	}

	indexPages := func(bound string) int {
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		sql := store.EnrichClaimSQL(100)
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) "+sql, pgx.StrictNamedArgs{
			"lease_seconds": 60.0, "tick_id": "probe", "workspace_id": nil, "tick_started": start, "after": bound})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		// The index scan's own buffers, on the first Buffers line after its node.
		for i, line := range plan {
			if !strings.Contains(line, "Index Scan using lead_enrichment_claim_idx") {
				continue
			}
			for _, l := range plan[i+1:] {
				if _, hits, ok := strings.Cut(l, "Buffers: shared hit="); ok {
					n, err := strconv.Atoi(strings.Fields(hits)[0])
					if err != nil {
						t.Fatal(err)
					}
					return n
				}
			}
		}
		t.Fatalf("no index scan of the claim index with buffers:\n%s", strings.Join(plan, "\n"))
		return 0
	}
	from, head := indexPages(after.Format(time.RFC3339Nano)), indexPages("-infinity")
	t.Logf("claim index pages read: %d from the last batch, %d from the head", from, head)
	if from > 10 {
		t.Errorf("a claim from its last batch's due time read %d pages of the claim index, want a few (the head's graveyard: %d)", from, head)
	}
	if head < 5*from {
		t.Errorf("from the head the claim read %d pages, from the last batch %d: the graveyard this test needs is not there", head, from)
	}
}
