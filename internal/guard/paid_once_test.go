package guard_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/enrichtest"
	"github.com/rindactl/rindactl/internal/enrich/provider"
	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/requeue"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The invariant harness's seed 20057 (issue 24): a Postgres restart cut an
// enrich tick between Findymail's paid answer and its record, and the next
// tick bought the same find again. These tests cut the tick's database the
// way a restart or failover does (its backends terminated, new connections
// refused) at the moment the finder answers.

// outage cuts one test database away from the tick role: its backends are
// terminated and new connections refused until end.
type outage struct {
	t    *testing.T
	db   *storetest.DB
	ctl  *pgx.Conn // the superuser's own connection, which the outage spares
	mu   sync.Mutex
	cuts int
}

func newOutage(t *testing.T, db *storetest.DB) *outage {
	t.Helper()
	ctl, err := pgx.Connect(context.Background(), db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close(context.Background()) })
	return &outage{t: t, db: db, ctl: ctl}
}

func (o *outage) exec(sql string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.ctl.Exec(context.Background(), sql); err != nil {
		o.t.Errorf("outage: %s: %v", sql, err)
	}
}

// begin refuses the tick role's new connections and ends its open ones.
func (o *outage) begin() {
	o.mu.Lock()
	o.cuts++
	o.mu.Unlock()
	o.exec("REVOKE CONNECT ON DATABASE " + pgx.Identifier{o.db.Name}.Sanitize() + " FROM PUBLIC")
	o.exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND usename = '` + storetest.TickRole + `'`)
}

func (o *outage) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cuts
}

func (o *outage) end() {
	o.exec("GRANT CONNECT ON DATABASE " + pgx.Identifier{o.db.Name}.Sanitize() + " TO PUBLIC")
}

// cutOnFind makes the stand-in begin the outage when it finds the lead,
// before its (billed) answer goes out.
func (o *outage) cutOnFind(s *providertest.Server) {
	var once sync.Once
	s.SetDirectory(func(first, last, domain string) (string, bool) {
		email, found := providertest.DefaultDirectory(first, last, domain)
		if found {
			once.Do(o.begin)
		}
		return email, found
	})
}

// onMessage runs f once, the first time the tick logs msg.
type onMessage struct {
	msg  string
	once *sync.Once
	f    func()
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(h.f)
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }

// paidOnceWorld is one findable lead, Findymail, and the tick's own pool
// as the least-privilege role.
type paidOnceWorld struct {
	db     *storetest.DB
	set    *providertest.Set
	tick   *pgxpool.Pool
	finder enrich.Finder
	guard  *guard.Guard
	lead   int64
	email  string
}

func newPaidOnceWorld(t *testing.T) *paidOnceWorld {
	t.Helper()
	ctx := context.Background()
	w := &paidOnceWorld{db: storetest.New(t), set: providertest.StartAll()}
	t.Cleanup(w.set.Close)
	first, last, domain := "Ada", "Lovelace", "analytical.example"
	var found bool
	if w.email, found = providertest.DefaultDirectory(first, last, domain); !found {
		t.Fatal("the stand-in's directory misses the test's lead")
	}
	if _, err := enrichtest.ImportLeads(ctx, w.db.Pool, "acme", []store.LeadImport{{ExternalID: "1", FirstName: first, LastName: last, Domain: domain}}); err != nil {
		t.Fatal(err)
	}
	if err := w.db.Pool.QueryRow(ctx, `UPDATE lead_enrichment SET updated_at = now() - interval '1 second', next_attempt_at = now() - interval '1 second'
		RETURNING lead_id`).Scan(&w.lead); err != nil {
		t.Fatal(err)
	}
	w.tick = w.db.TickPool(t)
	cfg, err := guard.ConfigFromEnv(func(string) string { return "" }, provider.DefaultLimits("findymail"))
	if err != nil {
		t.Fatal(err)
	}
	w.guard = guard.New(w.tick, cfg, nil)
	if w.finder, err = provider.NewFinder("findymail", w.set.Getenv); err != nil {
		t.Fatal(err)
	}
	return w
}

// run is a tick with a deadline well past its one lead's work, so a loaded
// machine's slow start does not end it before the call (or before the
// database is back).
func (w *paidOnceWorld) run(id string, log *slog.Logger) (enrich.Report, error) {
	return w.runFor(id, log, 30*time.Second)
}

func (w *paidOnceWorld) runFor(id string, log *slog.Logger, maxDuration time.Duration) (enrich.Report, error) {
	return enrich.RunTick(context.Background(), w.tick, enrich.TickConfig{
		Finders: []enrich.Finder{w.finder}, Guard: w.guard, TickID: id, Batch: 10, Concurrency: 2,
		MaxDuration: maxDuration, CallTimeout: time.Second, Lease: time.Minute, Logger: log,
		// The hold an operator lifts (requeue --refind): the in-doubt retry
		// is TestEnrichKillInDoubtRecoversByItself's (internal/reliability).
		InDoubtRetryAfter: enrich.InDoubtRetryOff,
	})
}

// ledger lists the lead's Findymail calls as "state/outcome".
func (w *paidOnceWorld) ledger(t *testing.T) []string {
	t.Helper()
	return storetest.Column[string](t, w.db.Pool, `SELECT state || '/' || coalesce(outcome, '') FROM provider_calls
		WHERE lead_id = $1 AND provider = 'findymail' ORDER BY id`, w.lead)
}

func (w *paidOnceWorld) state(t *testing.T) (status, email, lastError string) {
	t.Helper()
	if err := w.db.Pool.QueryRow(context.Background(), `SELECT e.status, coalesce(l.email, ''), coalesce(e.last_error, '')
		FROM lead_enrichment e JOIN leads l ON l.id = e.lead_id WHERE e.lead_id = $1`, w.lead).Scan(&status, &email, &lastError); err != nil {
		t.Fatal(err)
	}
	return status, email, lastError
}

// A database that comes back within the tick's deadline: the paid answer
// is recorded once it is back, as a settled find with its lead, and the
// lead is enriched. Before the fix the settle was tried once: the ledger
// row stayed 'reserved' and the find lived only in the tick's memory.
func TestPaidFindSurvivesABriefDatabaseLoss(t *testing.T) {
	t.Parallel()
	w := newPaidOnceWorld(t)
	cut := newOutage(t, w.db)
	cut.cutOnFind(w.set.Findymail)
	// The database returns as soon as the tick has failed to record the
	// call once: a restart that is over in a moment.
	log := slog.New(onMessage{msg: "guard could not record the call", once: &sync.Once{}, f: cut.end})
	_, err := w.run("brief-1", log)
	cut.end()
	if cut.count() != 1 {
		t.Fatalf("the finder was not reached (%d outages): the test proves nothing", cut.count())
	}
	if err != nil {
		t.Logf("tick: %v", err)
	}
	// Whatever the tick could record, a later tick after its lease must
	// not buy the find again.
	if _, err := w.db.Pool.Exec(context.Background(), `UPDATE lead_enrichment SET locked_until = now() - interval '1 second',
		next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second' WHERE status = 'in_progress'`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.run("brief-2", nil); err != nil {
		t.Fatal(err)
	}
	if n := w.set.Findymail.Count(); n != 1 {
		t.Errorf("Findymail received %d requests for the lead, want 1: a paid find bought again", n)
	}
	if calls := w.ledger(t); len(calls) != 1 || calls[0] != "settled/found" {
		t.Errorf("ledger %v, want one settled/found call", calls)
	}
	if status, email, lastError := w.state(t); status != "enriched" || email != w.email {
		t.Errorf("lead %s with %q (%s), want enriched with %s", status, email, lastError, w.email)
	}
}

// A database away for longer than the tick's deadline (or a tick killed
// between the answer and its record): the answer is lost, but the call
// stays in the ledger, admitted and never settled. The next tick must not
// send the lead to that finder again: the call is settled as billed and in
// doubt, and, with RINDA_IN_DOUBT_RETRY_AFTER=off, the lead waits for an
// operator (enrichment_failed, saying so) until `requeue --refind` asks
// again. Before the fix the next tick bought
// the find a second time.
func TestPaidFindInDoubtIsNotBoughtAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newPaidOnceWorld(t)
	cut := newOutage(t, w.db)
	cut.cutOnFind(w.set.Findymail)
	// The deadline passes while the database is away.
	_, err := w.runFor("lost-1", nil, 3*time.Second)
	cut.end()
	if cut.count() != 1 {
		t.Fatalf("the finder was not reached (%d outages): the test proves nothing", cut.count())
	}
	if err == nil {
		t.Fatal("the tick recorded its outcomes through an outage that outlasted it")
	}
	// Its lease runs out.
	if _, err := w.db.Pool.Exec(ctx, `UPDATE lead_enrichment SET locked_until = now() - interval '1 second',
		next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second' WHERE status = 'in_progress'`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.run("lost-2", nil); err != nil {
		t.Fatal(err)
	}
	if n := w.set.Findymail.Count(); n != 1 {
		t.Fatalf("Findymail received %d requests for the lead, want 1: a paid find bought again", n)
	}
	if calls := w.ledger(t); len(calls) != 1 || calls[0] != "settled/in_doubt" {
		t.Errorf("ledger %v, want the one call settled/in_doubt (billed: its answer may have been)", calls)
	}
	var doubted []string
	if err := w.db.Pool.QueryRow(ctx, `SELECT doubted_by FROM lead_enrichment WHERE lead_id = $1`, w.lead).Scan(&doubted); err != nil {
		t.Fatal(err)
	}
	if len(doubted) != 1 || doubted[0] != "findymail" {
		t.Errorf("doubted_by %v, want [findymail]", doubted)
	}
	status, _, lastError := w.state(t)
	if status != "enrichment_failed" || !strings.Contains(lastError, "findymail") || !strings.Contains(lastError, "--refind") {
		t.Errorf("lead %s (%q), want enrichment_failed naming findymail and requeue --refind", status, lastError)
	}

	// A plain requeue does not ask Findymail again; --refind does.
	for i, refind := range []bool{false, true} {
		p, err := requeue.Prepare(ctx, w.db.Pool, requeue.Filter{Status: "enrichment_failed", Refind: refind})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := requeue.Run(ctx, w.db.Pool, p, requeue.Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.db.Pool.Exec(ctx, `UPDATE lead_enrichment SET updated_at = now() - interval '1 second'`); err != nil {
			t.Fatal(err)
		}
		if _, err := w.run(fmt.Sprintf("lost-requeued-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.set.Findymail.Count(); n != 2 {
		t.Errorf("Findymail received %d requests after a plain requeue and one with --refind, want 2 (only --refind asks again)", n)
	}
	if status, email, lastError := w.state(t); status != "enriched" || email != w.email {
		t.Errorf("after --refind the lead is %s with %q (%s), want enriched with %s", status, email, lastError, w.email)
	}
}

// A tick killed mid-call leaves its ledger row reserved. The tick that
// takes the lead over after the lease doubts only a call that may have
// gone out: one that had no rate slot to wait for, or whose wait ended
// (started_at). A call killed while it waited for its slot was never made:
// it is refunded and the lead goes to the finder as usual.
func TestTakeoverDoubtsOnlyCallsThatMayHaveGoneOut(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		callAt     string // relative to the admission
		started    bool
		wantLedger string
		wantCalls  int
		wantStatus string
	}{
		{"admitted without a wait", "0", false, "settled/in_doubt", 0, "enrichment_failed"},
		{"waited and went out", "2 seconds", true, "settled/in_doubt", 0, "enrichment_failed"},
		{"killed while waiting for its slot", "2 seconds", false, "refunded/skipped", 1, "enriched"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			w := newPaidOnceWorld(t)
			// What the killed tick left: the lead claimed, its lease run
			// out, and the call reserved (spend charged).
			for _, q := range []string{
				`UPDATE lead_enrichment SET status = 'in_progress', locked_by = 'killed', locked_until = now() - interval '1 second',
					next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second' WHERE lead_id = $1`,
				`INSERT INTO workspace_spend (workspace_id, month, spent_usd)
					SELECT workspace_id, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 0.05 FROM leads WHERE id = $1`,
				`INSERT INTO provider_calls (workspace_id, lead_id, provider, cost_usd, tick_id, created_at, call_at, started_at)
					SELECT workspace_id, id, 'findymail', 0.05, 'killed', now() - interval '1 minute',
					       now() - interval '1 minute' + $2::interval, CASE WHEN $3 THEN now() - interval '50 seconds' END
					FROM leads WHERE id = $1`,
			} {
				args := []any{w.lead, tc.callAt, tc.started}
				if !strings.Contains(q, "$2") {
					args = args[:1]
				}
				if _, err := w.db.Pool.Exec(ctx, q, args...); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.run("takeover", nil); err != nil {
				t.Fatal(err)
			}
			if n := w.set.Findymail.Count(); n != tc.wantCalls {
				t.Errorf("Findymail received %d requests, want %d", n, tc.wantCalls)
			}
			if calls := w.ledger(t); len(calls) == 0 || calls[0] != tc.wantLedger {
				t.Errorf("ledger %v, want the killed tick's call %s first", calls, tc.wantLedger)
			}
			if status, _, lastError := w.state(t); status != tc.wantStatus {
				t.Errorf("lead %s (%s), want %s", status, lastError, tc.wantStatus)
			}
			// The refunded call's cost went back to the month; a doubted
			// one stays spent.
			var spent float64
			if err := w.db.Pool.QueryRow(ctx, `SELECT coalesce(sum(spent_usd), 0)::float8 FROM workspace_spend`).Scan(&spent); err != nil {
				t.Fatal(err)
			}
			if wantRefund := tc.wantLedger == "refunded/skipped"; wantRefund != (spent < 0.05) {
				t.Errorf("month's spend %.4f after the takeover; refunded: %v", spent, wantRefund)
			}
		})
	}
}
