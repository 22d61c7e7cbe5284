package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestImportLeadsUpsertsByExternalID(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	first := []store.LeadImport{
		{ExternalID: "a", FirstName: "Ada", LastName: "Lovelace", Domain: "analytical.example"},
		{ExternalID: "b", FirstName: "Alan", LastName: "Turing", Domain: "bletchley.example", Email: "alan@bletchley.example"},
		{FirstName: "Grace", LastName: "Hopper", Domain: "navy.example"},
	}
	res, err := store.ImportLeads(ctx, db.Pool, "acme", first)
	if err != nil {
		t.Fatal(err)
	}
	if !res.WorkspaceCreated || res.Inserted != 3 || res.Updated != 0 || res.Queued != 2 {
		t.Fatalf("first import: %+v, want workspace created, 3 inserted, 2 queued", res)
	}
	// A provider found Ada's address meanwhile.
	if _, err := db.Pool.Exec(ctx, `UPDATE leads SET email = 'ada@analytical.example', email_source = 'hunter' WHERE external_id = 'a'`); err != nil {
		t.Fatal(err)
	}
	again := []store.LeadImport{
		{ExternalID: "a", FirstName: "Ada", LastName: "King", Domain: "analytical.example"},
		{ExternalID: "b", FirstName: "Alan", LastName: "Turing", Domain: "bletchley.example", Email: "alan@bletchley.example"},
	}
	res, err = store.ImportLeads(ctx, db.Pool, "acme", again)
	if err != nil {
		t.Fatal(err)
	}
	if res.WorkspaceCreated || res.Inserted != 0 || res.Updated != 2 || res.Queued != 0 {
		t.Fatalf("re-import: %+v, want 2 updated, nothing inserted or queued", res)
	}
	var n int
	var last, email, source string
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM leads`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("leads after re-import: %d (%v), want 3", n, err)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT last_name, email, email_source FROM leads WHERE external_id = 'a'`).Scan(&last, &email, &source); err != nil {
		t.Fatal(err)
	}
	if last != "King" || email != "ada@analytical.example" || source != "hunter" {
		t.Fatalf("lead a = %s %s %s: want the new name and the found address kept", last, email, source)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM lead_enrichment`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("enrichment rows: %d (%v), want 2 (one per lead queued once)", n, err)
	}
}

func TestImportLeadsWithEmailClosesWaitingEnrichment(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	lead := store.LeadImport{ExternalID: "x", FirstName: "Ada", LastName: "Lovelace", Domain: "analytical.example"}
	if _, err := store.ImportLeads(ctx, db.Pool, "acme", []store.LeadImport{lead}); err != nil {
		t.Fatal(err)
	}
	lead.Email = "ada@analytical.example"
	res, err := store.ImportLeads(ctx, db.Pool, "acme", []store.LeadImport{lead})
	if err != nil {
		t.Fatal(err)
	}
	var status, source string
	if err := db.Pool.QueryRow(ctx, `SELECT e.status, l.email_source FROM lead_enrichment e JOIN leads l ON l.id = e.lead_id`).Scan(&status, &source); err != nil {
		t.Fatal(err)
	}
	if res.Closed != 1 || status != "enriched" || source != "import" {
		t.Fatalf("closed=%d status=%s source=%s: want the pending row closed by the imported address", res.Closed, status, source)
	}
}

func TestImportLeadsIsAllOrNothing(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	// The second lead violates nothing we check in Go but breaks the
	// database's identity rule (same external_id twice in one statement).
	leads := []store.LeadImport{
		{ExternalID: "dup", FirstName: "A", Domain: "a.example"},
		{ExternalID: "dup", FirstName: "B", Domain: "b.example"},
	}
	if _, err := store.ImportLeads(ctx, db.Pool, "acme", leads); err == nil {
		t.Fatal("import with a repeated external_id succeeded")
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM leads) + (SELECT count(*) FROM workspaces)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows left after a failed import: %d (%v), want 0", n, err)
	}
}

func BenchmarkImportLeads100k(b *testing.B) {
	db := storetest.New(b)
	leads := make([]store.LeadImport, 100_000)
	for i := range leads {
		leads[i] = store.LeadImport{ExternalID: fmt.Sprintf("crm-%d", i), FirstName: "First", LastName: fmt.Sprintf("Last%d", i),
			Company: "Company", Domain: fmt.Sprintf("c%d.example", i%5000)}
		if i%3 == 0 {
			leads[i].Email = fmt.Sprintf("p%d@c.example", i)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := store.ImportLeads(context.Background(), db.Pool, "bench", leads); err != nil {
			b.Fatal(err)
		}
	}
}
