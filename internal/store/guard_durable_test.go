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
	rows, err := store.GuardAdmit(ctx, tx, store.GuardAdmitParams{WorkspaceID: ws, Provider: "findymail",
		TickID: "t1", ProbeLease: time.Minute, CostUSD: 0.01}, []store.GuardAdmitCall{{LeadID: leadID, ProbeOwner: "t1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].CallID == nil {
		t.Fatalf("admit: %+v, want a ledger row", rows)
	}
	durable("admitting a call")
	settle := func(found string) {
		t.Helper()
		if err := store.GuardSettle(ctx, tx, ws, "findymail", []store.GuardSettleCall{
			{CallID: *rows[0].CallID, State: "settled", Outcome: "found", Clean: true, LeadID: leadID, Found: found}}); err != nil {
			t.Fatal(err)
		}
	}
	settle("ada@example.test")
	durable("settling it")
	var found, by string
	if err := tx.QueryRow(ctx, `SELECT found_email, found_by FROM lead_enrichment WHERE lead_id = $1`, leadID).Scan(&found, &by); err != nil {
		t.Fatal(err)
	}
	if found != "ada@example.test" || by != "findymail" {
		t.Errorf("lead keeps %q found by %q, want the settled find with its finder", found, by)
	}
	// Settled once: a retry changes nothing in the ledger, and a lead
	// keeps the find it holds.
	settle("other@example.test")
	var settled int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM provider_calls WHERE state = 'settled' AND outcome = 'found'`).Scan(&settled); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, `SELECT found_email FROM lead_enrichment WHERE lead_id = $1`, leadID).Scan(&found); err != nil {
		t.Fatal(err)
	}
	if settled != 1 || found != "ada@example.test" {
		t.Errorf("after a second settle: %d settled calls, lead keeps %q; want 1 and the first find", settled, found)
	}
}
