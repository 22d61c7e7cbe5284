package enrich_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich/enrichtest"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// env is one test's database and provider stand-ins.
type env struct {
	db  *storetest.DB
	set *providertest.Set
	log *testkit.Buffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	set := providertest.StartAll()
	t.Cleanup(set.Close)
	return &env{db: storetest.New(t), set: set, log: &testkit.Buffer{}}
}

// seed imports n leads without email into workspace ws and returns their
// ids in order. Names are distinct so stand-in requests identify leads.
func (e *env) seed(t testing.TB, ws string, n int) []int64 {
	t.Helper()
	leads := make([]store.LeadImport, n)
	for i := range leads {
		leads[i] = store.LeadImport{ExternalID: fmt.Sprintf("%s-%d", ws, i), FirstName: fmt.Sprintf("Ada%d", i),
			LastName: "Lovelace", Domain: fmt.Sprintf("co%d.example", i)}
	}
	return seedLeads(t, e.db, ws, leads)
}

func seedLeads(t testing.TB, db *storetest.DB, ws string, leads []store.LeadImport) []int64 {
	t.Helper()
	ctx := context.Background()
	res, err := enrichtest.ImportLeads(ctx, db.Pool, ws, leads)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool.Query(ctx, `SELECT id FROM leads WHERE workspace_id = $1 ORDER BY id`, res.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Imported rows must predate the tick's start (a tick skips rows
	// updated since it started).
	if _, err := db.Pool.Exec(ctx, `UPDATE lead_enrichment SET updated_at = now() - interval '1 second', next_attempt_at = now() - interval '1 second' WHERE workspace_id = $1`, res.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	return ids
}

// config builds a tick over the stand-ins with the named finders, guarded
// as in production: the Postgres guard with the shipped buckets, breakers
// and prices.
func (e *env) config(t testing.TB, finders ...string) enrich.TickConfig {
	t.Helper()
	gcfg, err := guard.ConfigFromEnv(func(string) string { return "" }, provider.DefaultLimits(finders...))
	if err != nil {
		t.Fatal(err)
	}
	cfg := enrich.TickConfig{MaxDuration: 30 * time.Second, Logger: slog.New(slog.NewJSONHandler(e.log, nil)),
		Guard: guard.New(e.db.Pool, gcfg, nil)}
	for _, name := range finders {
		f, err := provider.NewFinder(name, e.set.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Finders = append(cfg.Finders, f)
	}
	return cfg
}

func (e *env) verifier(t testing.TB) enrich.Verifier {
	t.Helper()
	v, err := provider.NewVerifier("millionverifier", e.set.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (e *env) tick(t testing.TB, cfg enrich.TickConfig) enrich.Report {
	t.Helper()
	rep, err := enrich.RunTick(context.Background(), e.db.Pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// counts is the number of enrichment rows per status.
func (e *env) counts(t testing.TB) map[lead.Status]int {
	t.Helper()
	rows, err := e.db.Pool.Query(context.Background(), `SELECT status, count(*) FROM lead_enrichment GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[lead.Status]int{}
	for rows.Next() {
		var s lead.Status
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

// enrichRow is one lead's enrichment state; durations are from now().
type enrichRow struct {
	Status    lead.Status
	Attempts  int
	DueIn     time.Duration
	CacheIn   *time.Duration
	Provider  string
	LastError string
	Email     string
	DoubtedBy []string
}

func (e *env) row(t testing.TB, leadID int64) enrichRow {
	t.Helper()
	var r enrichRow
	var dueMS int64
	var cacheMS *int64
	err := e.db.Pool.QueryRow(context.Background(), `SELECT e.status, e.attempts,
		(extract(epoch FROM e.next_attempt_at - now()) * 1000)::bigint,
		(extract(epoch FROM e.negative_cache_until - now()) * 1000)::bigint,
		coalesce(e.provider, ''), coalesce(e.last_error, ''), coalesce(l.email, ''), e.doubted_by
		FROM lead_enrichment e JOIN leads l ON l.id = e.lead_id WHERE e.lead_id = $1`, leadID).
		Scan(&r.Status, &r.Attempts, &dueMS, &cacheMS, &r.Provider, &r.LastError, &r.Email, &r.DoubtedBy)
	if err != nil {
		t.Fatal(err)
	}
	r.DueIn = time.Duration(dueMS) * time.Millisecond
	if cacheMS != nil {
		d := time.Duration(*cacheMS) * time.Millisecond
		r.CacheIn = &d
	}
	return r
}

// makeDue moves every waiting row's clock to the past, as time passing
// would (the negative cache expiring, a backoff ending, a breaker's window
// running out).
func (e *env) makeDue(t testing.TB) {
	t.Helper()
	if _, err := e.db.Pool.Exec(context.Background(), `UPDATE breakers SET open_until = now() - interval '1 second'
		WHERE state <> 'closed'`); err != nil {
		t.Fatal(err)
	}
	_, err := e.db.Pool.Exec(context.Background(), `UPDATE lead_enrichment
		SET next_attempt_at = now() - interval '1 second',
		    negative_cache_until = CASE WHEN status = 'unreachable' THEN now() - interval '1 second' END,
		    updated_at = now() - interval '1 second'
		WHERE status IN ('pending', 'unreachable')`)
	if err != nil {
		t.Fatal(err)
	}
}

// perLead counts requests per lead name.
func perLead(reqs []providertest.Request) map[string]int {
	m := map[string]int{}
	for _, r := range reqs {
		m[r.FirstName+" "+r.LastName+"@"+r.Domain]++
	}
	return m
}

// ledgerOutcomes counts the guard's ledger rows by state/outcome.
func (e *env) ledgerOutcomes(t testing.TB) map[string]int {
	t.Helper()
	rows, err := e.db.Pool.Query(context.Background(), `SELECT state || '/' || coalesce(outcome, '-'), count(*)::int FROM provider_calls GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	return out
}

// inDoubt reports r as a lead whose Hunter call the tick cut with its
// request out: pending, uncharged, doubted by Hunter, asked again only
// after the in-doubt wait (hours away).
func (r enrichRow) inDoubt() bool {
	return r.Status == lead.Pending && r.Attempts == 0 && len(r.DoubtedBy) == 1 && r.DoubtedBy[0] == "hunter" &&
		r.DueIn > time.Hour && strings.Contains(r.LastError, enrich.InDoubtRetryEnv)
}
