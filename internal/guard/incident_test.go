package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/enrichtest"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// incidentLeadsEnv sets the incident test's size; `make reliability` runs
// it with issue 14's 2,000 leads at the default buckets, and with the memo's
// 86000 leads with the buckets off (RINDA_*_RATE=off).
const incidentLeadsEnv = "RINDA_INCIDENT_LEADS"

// The incident's burst through the real tick at the default buckets (the
// environment's RINDA_*_RATE, unset here): pending leads in one workspace,
// Findymail answering the incident's 429 "credits used up", Hunter healthy,
// --providers findymail,hunter --concurrency 25, ticks until none is due.
// Findymail gets a call per breaker window at most, Hunter serves every
// lead, none Hunter found is parked unreachable, and Slack gets exactly one
// message. Before issue 14 the first tick parked every lead beyond Hunter's
// first second of tokens unreachable for a day.
func TestIncidentBurstFindymailQuotaHunterServes(t *testing.T) {
	t.Parallel()
	n := 120
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
	if _, err := enrichtest.ImportLeads(ctx, db.Pool, "acme", leads); err != nil {
		t.Fatal(err)
	}
	// Imported rows must predate the tick's start.
	if _, err := db.Pool.Exec(ctx, "UPDATE lead_enrichment SET updated_at = now() - interval '1 second', next_attempt_at = now() - interval '1 second'"); err != nil {
		t.Fatal(err)
	}

	m := metrics.NewMetrics()
	cfg, err := guard.ConfigFromEnv(os.Getenv, provider.DefaultLimits("findymail", "hunter"))
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(db.Pool, cfg, m)
	var finders []enrich.Finder
	for _, name := range []string{"findymail", "hunter"} {
		f, err := provider.NewFinder(name, set.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		finders = append(finders, f)
	}
	// Ticks until no lead waits, as cron would run them: a lead whose rate
	// slot fell just past a tick's deadline is due a moment later.
	ticks := 0
	for ; ticks < 1000; ticks++ {
		var waiting int
		var dueIn time.Duration
		if err := db.Pool.QueryRow(ctx, `SELECT count(*), coalesce(greatest(min(next_attempt_at) - now(), '0'), '0')
			FROM lead_enrichment WHERE status IN ('pending', 'in_progress')`).Scan(&waiting, &dueIn); err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			break
		}
		if dueIn > time.Minute {
			t.Fatalf("%d leads wait %s after %d ticks; none may wait longer than a rate slot", waiting, dueIn, ticks)
		}
		time.Sleep(dueIn)
		rep, err := enrich.RunTick(ctx, db.Pool, enrich.TickConfig{
			Finders: finders, Guard: g, Concurrency: 25, Batch: 200, TickID: fmt.Sprintf("incident-%d", ticks),
		})
		if err != nil {
			t.Fatalf("tick %d: %v", ticks, err)
		}
		m.AddLeads("enriched", rep.Outcomes.Enriched)
	}

	// One call meets the quota and opens the breaker; its probe every
	// QuotaOpen (5 min) may add one per window.
	if got := set.Findymail.Count(); got < 1 || got > 3 {
		t.Errorf("Findymail received %d calls, want 1 to 3", got)
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
	if got := set.Hunter.Count(); got < n-n/200 || got > n || answered != n {
		t.Errorf("Hunter received %d calls and %d leads settled, want at least %d calls and all %d settled", got, answered, n-n/200, n)
	}
	// Only Hunter's misses wait as unreachable (Findymail, which might
	// find them, is out of credits); every address Hunter has is enriched.
	misses := 0
	for i := range n {
		if providertest.IsDefaultMiss(fmt.Sprintf("Ada%d", i), "Lovelace", fmt.Sprintf("co%d.example", i)) {
			misses++
		}
	}
	var enriched, unreachable int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'enriched'), count(*) FILTER (WHERE status = 'unreachable')
		FROM lead_enrichment`).Scan(&enriched, &unreachable); err != nil {
		t.Fatal(err)
	}
	if enriched != n-misses || unreachable != misses {
		t.Errorf("%d enriched and %d unreachable, want %d and Hunter's %d misses", enriched, unreachable, n-misses, misses)
	}

	hook := newSlackHook(t)
	if _, err := events.DeliverEvents(ctx, db.Pool, hook.URL, events.DeliverOptions{Metrics: m}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d leads settled in %d ticks: %d Findymail calls, %d Hunter calls, %d enriched, %d unreachable (Hunter's misses: %d), %d Slack messages",
		n, ticks, set.Findymail.Count(), set.Hunter.Count(), enriched, unreachable, misses, len(hook.posted()))
	if txt := hook.posted(); len(txt) != 1 || !strings.HasPrefix(txt[0], "Provider quota exhausted") || !strings.Contains(txt[0], "blocked until") {
		t.Errorf("slack got %q, want exactly one quota_exhausted message with the reopen time", txt)
	}

	// The metrics a tick exports describe the incident.
	file := t.TempDir() + "/rindactl_enrich.prom"
	if err := m.Export(ctx, db.Pool, metrics.ExportOptions{File: file}, "enrich"); err != nil {
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

// slackHook is an incoming-webhook stand-in answering "ok" like Slack; it
// keeps the fallback text of every message it accepted.
type slackHook struct {
	*httptest.Server
	mu    sync.Mutex
	texts []string
}

func newSlackHook(t *testing.T) *slackHook {
	h := &slackHook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Text   string `json:"text"`
			Blocks []any  `json:"blocks"`
		}
		if body, _ := io.ReadAll(r.Body); json.Unmarshal(body, &msg) != nil || msg.Text == "" || msg.Blocks == nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "invalid_payload")
			return
		}
		h.mu.Lock()
		h.texts = append(h.texts, msg.Text)
		h.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *slackHook) posted() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.texts...)
}
