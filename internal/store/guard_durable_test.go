package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// A provider call's ledger row is committed durably when it is admitted
// and when it is settled (with a find kept for its lead), even on a server
// whose default is synchronous_commit=off: lost in a crash while the call
// is in flight or just answered, the next tick would buy the same find
// again, with no trace of the first (issue 24; the invariant harness runs
// such a server).
func TestGuardLedgerCommitsDurably(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	var ws, leadID int64
	if err := db.Pool.QueryRow(ctx, `WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		l AS (INSERT INTO leads (workspace_id, first_name, company_domain) SELECT id, 'Ada', 'example.test' FROM w RETURNING id, workspace_id)
		INSERT INTO lead_enrichment (lead_id, workspace_id) SELECT id, workspace_id FROM l RETURNING workspace_id, lead_id`).Scan(&ws, &leadID); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	off := func() {
		t.Helper()
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			t.Fatal(err)
		}
	}
	durable := func(step string) {
		t.Helper()
		var setting string
		if err := tx.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&setting); err != nil {
			t.Fatal(err)
		}
		if setting != "on" {
			t.Errorf("synchronous_commit = %s after %s, want on", setting, step)
		}
		off()
	}
	off()
	row, err := store.GuardAdmit(ctx, tx, store.GuardAdmitParams{WorkspaceID: ws, Provider: "findymail", LeadID: leadID,
		TickID: "t1", ProbeOwner: "t1", ProbeLease: time.Minute, CostUSD: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if row.CallID == nil {
		t.Fatalf("admit: %+v, want a ledger row", row)
	}
	durable("admitting a call")
	first, err := store.GuardSettle(ctx, tx, *row.CallID, "settled", "found", ws, "findymail", true, "ada@example.test")
	if err != nil || !first {
		t.Fatalf("settle: %v, %v; want the reserved row settled", first, err)
	}
	durable("settling it")
	var found, by string
	if err := tx.QueryRow(ctx, `SELECT found_email, found_by FROM lead_enrichment WHERE lead_id = $1`, leadID).Scan(&found, &by); err != nil {
		t.Fatal(err)
	}
	if found != "ada@example.test" || by != "findymail" {
		t.Errorf("lead keeps %q found by %q, want the settled find with its finder", found, by)
	}
	// Settled once: a retry (or a claim's doubt) changes nothing.
	if first, err := store.GuardSettle(ctx, tx, *row.CallID, "settled", "found", ws, "findymail", true, "other@example.test"); err != nil || first {
		t.Errorf("second settle: %v, %v; want nothing changed", first, err)
	}
}
