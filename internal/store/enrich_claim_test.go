package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/enrichtest"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// seedStates imports one lead per status and sets its enrichment row with
// the given SQL fragment; it returns lead ids by name.
func seedStates(t *testing.T, db *storetest.DB, rows map[string]string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	var leads []store.LeadImport
	for name := range rows {
		leads = append(leads, store.LeadImport{ExternalID: name, FirstName: name, LastName: "X", Domain: "x.example"})
	}
	if _, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", leads); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for name, set := range rows {
		var id int64
		if err := db.Pool.QueryRow(ctx, `SELECT id FROM leads WHERE external_id = $1`, name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[name] = id
		if _, err := db.Pool.Exec(ctx, `UPDATE lead_enrichment SET `+set+`, updated_at = now() - interval '1 day' WHERE lead_id = $1`, id); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return ids
}

func TestClaimEnrichmentTakesOnlyDueRows(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ids := seedStates(t, db, map[string]string{
		"due":             `status = 'pending', next_attempt_at = now() - interval '1 minute'`,
		"backing_off":     `status = 'pending', next_attempt_at = now() + interval '1 minute'`,
		"lease_expired":   `status = 'in_progress', locked_by = 'dead', locked_until = now() - interval '1 s', next_attempt_at = now() - interval '1 s'`,
		"lease_held":      `status = 'in_progress', locked_by = 'alive', locked_until = now() + interval '5 min', next_attempt_at = now() + interval '5 min'`,
		"cache_expired":   `status = 'unreachable', negative_cache_until = now() - interval '1 s', next_attempt_at = now() - interval '1 s'`,
		"cache_fresh":     `status = 'unreachable', negative_cache_until = now() + interval '1 day', next_attempt_at = now() + interval '1 day'`,
		"failed":          `status = 'enrichment_failed', next_attempt_at = now() - interval '1 day'`,
		"enriched":        `status = 'enriched', next_attempt_at = now() - interval '1 day'`,
		"touched_in_tick": `status = 'pending', next_attempt_at = now() - interval '1 minute'`,
	})
	start := time.Now()
	if _, err := db.Pool.Exec(ctx, `UPDATE lead_enrichment SET updated_at = now() + interval '1 hour' WHERE lead_id = $1`, ids["touched_in_tick"]); err != nil {
		t.Fatal(err)
	}
	got, err := store.ClaimEnrichment(ctx, db.Pool, store.EnrichClaim{TickID: "t1", Batch: 100, Lease: time.Minute, TickStarted: start})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		for name, id := range ids {
			if id == c.LeadID {
				names = append(names, name)
			}
		}
		if c.Attempts != 1 || c.FirstName == "" || c.Domain != "x.example" {
			t.Errorf("claimed lead %+v: want attempts 1 and the lead's fields", c)
		}
	}
	slices.Sort(names)
	want := []string{"cache_expired", "due", "lease_expired"}
	if !slices.Equal(names, want) {
		t.Fatalf("claimed %v, want %v", names, want)
	}
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM lead_enrichment WHERE status = 'in_progress' AND locked_by = 't1'
		AND next_attempt_at = locked_until AND locked_until > now()`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("rows leased to t1 with next_attempt_at = locked_until: %d (%v), want 3", n, err)
	}
}

func TestRecordEnrichmentRespectsLeases(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ids := seedStates(t, db, map[string]string{
		"mine":   `status = 'pending'`,
		"stolen": `status = 'pending'`,
	})
	claimed, err := store.ClaimEnrichment(ctx, db.Pool, store.EnrichClaim{TickID: "old", Batch: 10, Lease: time.Minute, TickStarted: time.Now()})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %d leads, %v", len(claimed), err)
	}
	// Another tick took "stolen" over after old's lease ran out.
	if _, err := db.Pool.Exec(ctx, `UPDATE lead_enrichment SET locked_by = 'new' WHERE lead_id = $1`, ids["stolen"]); err != nil {
		t.Fatal(err)
	}
	n, err := store.RecordEnrichment(ctx, db.Pool, "old", []store.EnrichOutcome{
		{LeadID: ids["mine"], Status: "enriched", Provider: "hunter", Email: "mine@x.example"},
		{LeadID: ids["stolen"], Status: "unreachable", Delay: 24 * time.Hour, Provider: "findymail", Refund: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("recorded %d, want 1 (the stolen lease is not overwritten)", n)
	}
	var status, email, source string
	var locked *string
	if err := db.Pool.QueryRow(ctx, `SELECT e.status, l.email, l.email_source, e.locked_by FROM lead_enrichment e JOIN leads l ON l.id = e.lead_id WHERE e.lead_id = $1`,
		ids["mine"]).Scan(&status, &email, &source, &locked); err != nil {
		t.Fatal(err)
	}
	if status != "enriched" || email != "mine@x.example" || source != "hunter" || locked != nil {
		t.Fatalf("mine: %s %s %s lock=%v", status, email, source, locked)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT status FROM lead_enrichment WHERE lead_id = $1`, ids["stolen"]).Scan(&status); err != nil || status != "in_progress" {
		t.Fatalf("stolen: %s (%v), want still in_progress for its new owner", status, err)
	}
}

func TestRecordEnrichmentUnreachableSetsOneClock(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	ids := seedStates(t, db, map[string]string{"q": `status = 'pending', attempts = 2`})
	if _, err := store.ClaimEnrichment(ctx, db.Pool, store.EnrichClaim{TickID: "t", Batch: 1, Lease: time.Minute, TickStarted: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.RecordEnrichment(ctx, db.Pool, "t", []store.EnrichOutcome{
		{LeadID: ids["q"], Status: "unreachable", Delay: 24 * time.Hour, Refund: true, Provider: "findymail", LastError: "quota"},
	}); err != nil {
		t.Fatal(err)
	}
	var same, dayAhead bool
	var attempts int
	if err := db.Pool.QueryRow(ctx, `SELECT next_attempt_at = negative_cache_until,
		negative_cache_until BETWEEN now() + interval '23 hours' AND now() + interval '25 hours', attempts
		FROM lead_enrichment WHERE lead_id = $1`, ids["q"]).Scan(&same, &dayAhead, &attempts); err != nil {
		t.Fatal(err)
	}
	if !same || !dayAhead || attempts != 2 {
		t.Fatalf("next_attempt_at = negative_cache_until: %v, a day ahead: %v, attempts %d (want 2: refunded)", same, dayAhead, attempts)
	}
}

func TestClaimEnrichmentWorkspaceFilter(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	var wsB int64
	for _, ws := range []string{"a", "b"} {
		res, err := enrichtest.ImportLeads(ctx, db.Pool, ws, []store.LeadImport{{FirstName: "Ada", Domain: "x.example"}})
		if err != nil {
			t.Fatal(err)
		}
		wsB = res.WorkspaceID
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE lead_enrichment SET updated_at = now() - interval '1 s'`); err != nil {
		t.Fatal(err)
	}
	got, err := store.ClaimEnrichment(ctx, db.Pool, store.EnrichClaim{TickID: "t", Batch: 10, Lease: time.Minute, WorkspaceID: wsB, TickStarted: time.Now()})
	if err != nil || len(got) != 1 || got[0].WorkspaceID != wsB {
		t.Fatalf("claimed %+v (%v), want only workspace b's lead", got, err)
	}
}
