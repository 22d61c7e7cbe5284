package guard_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// incidentLeadsEnv sets the incident test's size; `make reliability` runs
// it with the memo's 86000 leads.
const incidentLeadsEnv = "RINDA_INCIDENT_LEADS"

// The incident's burst through the real tick: pending leads in one
// workspace, Findymail answering the incident's 429 "credits used up",
// Hunter healthy, --providers findymail,hunter --concurrency 25, three
// ticks. Findymail gets exactly one call, Hunter serves the rest, no lead
// fails, and Slack gets exactly one quota_exhausted message.
func TestIncidentBurstFindymailQuotaHunterServes(t *testing.T) {
	t.Parallel()
	n := 3000
	if v := os.Getenv(incidentLeadsEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("invalid %s %q", incidentLeadsEnv, v)
		}
	}
	ctx := context.Background()
	db := storetest.New(t)
	set := providertest.StartAll()
	defer set.Close()
	set.Findymail.SetMode(providertest.ModeQuota429)

	leads := make([]store.LeadImport, n)
	for i := range leads {
		leads[i] = store.LeadImport{ExternalID: strconv.Itoa(i), FirstName: fmt.Sprintf("Ada%d", i), LastName: "Lovelace", Domain: fmt.Sprintf("co%d.example", i)}
	}
	if _, err := store.ImportLeads(ctx, db.Pool, "acme", leads); err != nil {
		t.Fatal(err)
	}
	// Imported rows must predate the tick's start.
	if _, err := db.Pool.Exec(ctx, "UPDATE lead_enrichment SET updated_at = now() - interval '1 second', next_attempt_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}

	metrics := guard.NewMetrics()
	g := guard.New(db.Pool, guard.Config{Providers: map[string]guard.Limits{
		"findymail": {CostUSD: 0.049},
		"hunter":    {CostUSD: 0.0245},
	}}, metrics)
	var finders []enrich.Finder
	for _, name := range []string{"findymail", "hunter"} {
		f, err := provider.NewFinder(name, set.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		finders = append(finders, f)
	}
	for tick := range 3 {
		rep, err := enrich.RunTick(ctx, db.Pool, enrich.TickConfig{
			Finders: finders, Guard: g, Concurrency: 25, Batch: 200, MaxDuration: 10 * time.Minute, Lease: 20 * time.Minute,
			TickID: fmt.Sprintf("incident-%d", tick),
		})
		if err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		metrics.AddLeads("enriched", rep.Outcomes.Enriched)
	}

	if got := set.Findymail.Count(); got != 1 {
		t.Errorf("Findymail received %d calls, want 1", got)
	}
	var failed, waiting, answered int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'enrichment_failed'),
		count(*) FILTER (WHERE status IN ('pending', 'in_progress')),
		count(*) FILTER (WHERE status IN ('enriched', 'not_found', 'unreachable'))
		FROM lead_enrichment`).Scan(&failed, &waiting, &answered); err != nil {
		t.Fatal(err)
	}
	if failed != 0 || waiting != 0 {
		t.Errorf("%d leads enrichment_failed and %d still waiting, want none", failed, waiting)
	}
	if got := set.Hunter.Count(); got != n || answered != n {
		// A Hunter miss whose Findymail is blocked parks as unreachable
		// until the breaker's quota comes back; it is not a failure.
		t.Errorf("Hunter received %d calls and %d leads settled, want all %d", got, answered, n)
	}

	hook := newSlackHook(t)
	if _, err := guard.DeliverEvents(ctx, db.Pool, hook.URL, guard.DeliverOptions{Metrics: metrics}); err != nil {
		t.Fatal(err)
	}
	quota := 0
	for _, txt := range hook.texts() {
		if strings.HasPrefix(txt, "Provider quota exhausted") {
			quota++
		}
	}
	if quota != 1 {
		t.Errorf("slack got %d quota_exhausted messages, want 1: %q", quota, hook.texts())
	}

	// The metrics a tick exports describe the incident.
	file := t.TempDir() + "/rindactl_enrich.prom"
	if err := metrics.Export(ctx, db.Pool, guard.ExportOptions{File: file}, "enrich"); err != nil {
		t.Fatal(err)
	}
	prom, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`rindactl_provider_requests_total{class="quota_exhausted",provider="findymail"} 1`,
		`rindactl_breakers_open{provider="findymail"} 1`,
		`rindactl_workspace_spend_usd{workspace="acme"}`,
		`rindactl_tick_last_success_timestamp_seconds{kind="enrich"}`,
	} {
		if !strings.Contains(string(prom), want) {
			t.Errorf("metrics file lacks %s", want)
		}
	}
}
