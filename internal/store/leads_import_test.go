package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/enrichtest"

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
	res, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", first)
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
	res, err = enrichtest.ImportLeads(ctx, db.Pool, "acme", again)
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
	if _, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", []store.LeadImport{lead}); err != nil {
		t.Fatal(err)
	}
	lead.Email = "ada@analytical.example"
	res, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", []store.LeadImport{lead})
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
	// The second lead repeats the first's external_id (the staging
	// table's check finds it): the import fails whole, workspace included.
	leads := []store.LeadImport{
		{ExternalID: "dup", FirstName: "A", Domain: "a.example"},
		{ExternalID: "dup", FirstName: "B", Domain: "b.example"},
	}
	if _, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", leads); err == nil {
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
		if _, err := enrichtest.ImportLeads(context.Background(), db.Pool, "bench", leads); err != nil {
			b.Fatal(err)
		}
	}
}

// Issue 15/16: lines without an external_id are one lead per address (or,
// without one, per name at a domain): importing the same file twice, or a
// file that repeats a lead, merges instead of duplicating, and says so.
func TestImportLeadsWithoutExternalIDMergesDuplicates(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	file := []store.LeadImport{
		{FirstName: "Ada", LastName: "Lovelace", Domain: "analytical.example", Email: "ada@analytical.example"},
		{FirstName: "Grace", LastName: "Hopper", Domain: "navy.example"},
		{FirstName: "Ada", LastName: "King", Domain: "analytical.example", Email: "ada@analytical.example"}, // same address
		{FirstName: "grace", LastName: "HOPPER", Domain: "navy.example"},                                    // same name
	}
	res, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", file)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 2 || res.Merged != 2 || res.Queued != 1 {
		t.Fatalf("first import: %+v, want 2 inserted, 2 duplicates merged, 1 queued", res)
	}
	res, err = enrichtest.ImportLeads(ctx, db.Pool, "acme", file)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 0 || res.Merged != 4 || res.Queued != 0 {
		t.Fatalf("re-import: %+v, want nothing inserted, 4 duplicates merged", res)
	}
	var n int
	var last string
	if err := db.Pool.QueryRow(ctx, `SELECT count(*), max(last_name) FILTER (WHERE email IS NOT NULL) FROM leads`).Scan(&n, &last); err != nil || n != 2 || last != "King" {
		t.Fatalf("leads after two imports: %d, Ada's last name %q (%v); want 2 leads, the last line's name", n, last, err)
	}
}

// A repeated external_id is caught across batches, not only within one.
func TestImportLeadsRepeatAcrossBatches(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	im, err := store.BeginLeadImport(ctx, db.Pool, "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback(ctx)
	if rep, err := im.Add(ctx, []store.LeadImport{{Line: 2, ExternalID: "x", FirstName: "A", Domain: "a.example"}}); err != nil || len(rep) != 0 {
		t.Fatalf("first batch: %v %v", rep, err)
	}
	rep, err := im.Add(ctx, []store.LeadImport{
		{Line: 3, ExternalID: "y", FirstName: "B", Domain: "b.example"},
		{Line: 4, ExternalID: "x", FirstName: "C", Domain: "c.example"},
		{Line: 5, ExternalID: "y", FirstName: "D", Domain: "d.example"},
	})
	if err != nil || len(rep) != 2 || rep[0] != (store.LeadRepeat{Line: 4, ExternalID: "x", FirstLine: 2}) || rep[1] != (store.LeadRepeat{Line: 5, ExternalID: "y", FirstLine: 3}) {
		t.Fatalf("second batch repeats = %+v (%v), want lines 4 (of 2) and 5 (of 3)", rep, err)
	}
	res, err := im.Commit(ctx)
	if err != nil || res.Inserted != 2 {
		t.Fatalf("commit: %+v %v, want the 2 first uses inserted", res, err)
	}
}
