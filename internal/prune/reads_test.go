package prune_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/prune"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// year seeds 400 days of history around the fixture's campaign, in time
// order: an enrollment started per day (every seventh still active, the
// others ended in each way) with two sends a day apart, a ledger row every
// six hours, an event every three days (one open breaker episode among
// them, undelivered alerts), and each tick kind's runs every six hours
// (every tenth failed, older ones claimed more, two crashed in the last day).
func (h *history) year(now time.Time) {
	h.t.Helper()
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO leads (workspace_id, first_name, email, created_at)
		 SELECT @ws, 'Year', 'y' || g || '@example.test', @now - (400 - g) * interval '1 day'
		 FROM generate_series(1, 400) g`,
		`INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, next_send_at, mailbox_id, created_at, updated_at)
		 SELECT @campaign, l.id, @ws,
		        (ARRAY['active', 'completed', 'replied', 'bounced', 'failed', 'delivery_unknown', 'unsubscribed'])[1 + l.g % 7],
		        3, @now + interval '365 days', @mailbox, l.created_at, l.created_at + interval '1 day'
		 FROM (SELECT id, created_at, row_number() OVER (ORDER BY id) AS g FROM leads WHERE email LIKE 'y%') l
		 ORDER BY l.id`,
		`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status, created_at, sent_at)
		 SELECT e.id, s.step, @mailbox, '<y' || e.id || '.' || s.step || '@acme.test>',
		        CASE WHEN e.status = 'delivery_unknown' AND s.step = 2 THEN 'delivery_unknown' ELSE 'sent' END,
		        e.created_at + (s.step - 1) * interval '23 hours', e.created_at + (s.step - 1) * interval '23 hours'
		 FROM enrollments e CROSS JOIN (VALUES (1), (2)) s (step)
		 WHERE e.campaign_id = @campaign
		 ORDER BY e.created_at + (s.step - 1) * interval '23 hours', e.id`,
		`INSERT INTO provider_calls (workspace_id, provider, state, cost_usd, outcome, created_at, settled_at)
		 SELECT @ws, 'findymail', (ARRAY['settled', 'settled', 'refunded', 'reserved'])[1 + g % 4], 0.05, 'found', t, t
		 FROM generate_series(@now - interval '400 days', @now, interval '6 hours') WITH ORDINALITY AS s (t, g)
		 ORDER BY t`,
		`INSERT INTO breakers (workspace_id, provider, state, open_until, episode, opened_at)
		 VALUES (@ws, 'findymail', 'open', @now + interval '1 hour', 30, @now - interval '300 days')`,
		`INSERT INTO events (kind, workspace_id, provider, dedupe_key, payload, alert, delivered_at, created_at, next_attempt_at)
		 SELECT (ARRAY['quota_exhausted', 'breaker_opened', 'breaker_closed', 'ceiling_reached'])[1 + g % 4], @ws, 'findymail',
		        'y:' || g, jsonb_build_object('episode', g / 4), g % 4 <> 1,
		        CASE WHEN g % 13 = 0 THEN NULL ELSE @now - (400 - 3 * g) * interval '1 day' + interval '1 minute' END,
		        @now - (400 - 3 * g) * interval '1 day', @now
		 FROM generate_series(0, 133) g
		 ORDER BY g`,
		`INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, exit_status, claimed, error)
		 SELECT k, k || '-' || g, 'host', 1, t, t + interval '10 seconds', CASE WHEN g % 10 = 0 THEN 1 ELSE 0 END, 2000 - g,
		        CASE WHEN g % 10 = 0 THEN 'failure ' || g END
		 FROM generate_series(@now - interval '400 days', @now - interval '1 hour', interval '6 hours') WITH ORDINALITY AS s (t, g)
		 CROSS JOIN unnest(ARRAY['enrich', 'email', 'events', 'inbox']) k
		 ORDER BY t, k`,
		`INSERT INTO tick_runs (kind, tick_id, host, pid, started_at)
		 VALUES ('email', 'crashed-1', 'host', 1, @now - interval '20 hours'),
		        ('enrich', 'crashed-2', 'host', 1, @now - interval '3 hours')`,
		`UPDATE workspaces SET monthly_usd_ceiling = 4 WHERE id = @ws`,
	} {
		sql = strings.NewReplacer("@ws", fmt.Sprint(h.ws), "@campaign", fmt.Sprint(h.campaign), "@mailbox", fmt.Sprint(h.mailbox),
			"@now", "'"+now.UTC().Format(time.RFC3339Nano)+"'::timestamptz").Replace(sql)
		if _, err := h.db.Exec(ctx, sql); err != nil {
			h.t.Fatalf("%s: %v", sql, err)
		}
	}
}

// reads is what status, why, doctor and the inbox's reply matching read
// at now: the same before and after a prune, or a row they need is gone.
func reads(t *testing.T, db *storetest.DB, now time.Time) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	js := func(name string, v any) {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	rep, err := status.Build(ctx, db.Pool, now, status.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	js("status", rep)
	health, err := store.TickHealthOf(ctx, db.Pool, tickkind.All, 5*time.Minute, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := range health {
		health[i].Runs = min(health[i].Runs, 1) // the count of runs on record shrinks; whether there was one does not
		if since := health[i].SinceSuccess; since != nil {
			*since = 0 // read on the database's clock, which moves; status compares the success itself
		}
	}
	js("doctor", health)

	rows, err := db.Pool.Query(ctx, `SELECT e.id, e.status, e.mailbox_id, coalesce(array_agg(s.message_id ORDER BY s.step) FILTER (WHERE s.id IS NOT NULL), '{}')
		FROM enrollments e LEFT JOIN sends s ON s.enrollment_id = e.id
		WHERE e.status IN ('active', 'failed', 'delivery_unknown') GROUP BY e.id ORDER BY e.id`)
	if err != nil {
		t.Fatal(err)
	}
	type open struct {
		id, mailbox int64
		status      string
		messages    []string
	}
	var opens []open
	for rows.Next() {
		var o open
		if err := rows.Scan(&o.id, &o.status, &o.mailbox, &o.messages); err != nil {
			t.Fatal(err)
		}
		opens = append(opens, o)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(opens) < 100 {
		t.Fatalf("only %d open enrollments seeded", len(opens))
	}
	for _, o := range opens {
		why, err := status.ExplainEnrollment(ctx, db.Pool, now, o.id)
		if err != nil {
			t.Fatal(err)
		}
		js(fmt.Sprintf("why enrollment %d", o.id), why)
		matched, err := store.InboxSendsByMessageID(ctx, db.Pool, o.mailbox, o.messages)
		if err != nil {
			t.Fatal(err)
		}
		js(fmt.Sprintf("reply to enrollment %d (%s, %d messages)", o.id, o.status, len(o.messages)), matched)
	}
	return out
}

// A year of history pruned at every table's floor: status (caps, spend
// against the ceiling, breakers, tick history and cadence), why for every
// enrollment that has not ended, doctor's tick health and the inbox's
// reply matching read exactly what they read before.
func TestPruneKeepsWhatStatusWhyAndDoctorRead(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	h.year(now)
	before := reads(t, db, now)

	rep, err := prune.Run(context.Background(), db.TickPool(t), prune.Options{Keeps: tickTables(floors()), Batch: 50, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tables[:4] {
		if tr.Deleted == 0 {
			t.Errorf("%s: nothing deleted from a year of history", tr.Table)
		}
	}
	after := reads(t, db, now)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed after the prune:\nbefore %s\nafter  %s", name, b, after[name])
		}
	}
}

// notFound is a provider that finds nothing at once.
type notFound struct{}

func (notFound) Name() string { return "findymail" }

func (notFound) FindEmail(context.Context, enrich.Lead) (enrich.Finding, error) {
	return enrich.Finding{}, nil
}

// While a prune holds one batch of every table open (its locks all taken,
// uncommitted), an email tick and an enrichment tick do all their work on
// the same tables with a lock_timeout of 200 ms: had either waited for a
// lock prune holds, a statement would have failed. The bound is the rule
// (no shared lock), not a measured time.
func TestTicksNeverWaitForPrune(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	h.year(now)

	srv, err := smtptest.Start(smtptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := sequence.ParseCampaign(strings.NewReader(fmt.Sprintf(`workspace: live
name: live
mailboxes:
  - address: sdr@live.test
    smtp_url: %s
steps:
  - delay: 0s
    subject: Hi
    body: Hello {{.FirstName}}
`, srv.URL(""))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.ImportCampaign(ctx, db.Pool, c); err != nil {
		t.Fatal(err)
	}
	const due = 20
	for _, sql := range []string{
		`INSERT INTO leads (workspace_id, first_name, email) SELECT w.id, 'Live', 'live' || g || '@example.test'
		 FROM workspaces w, generate_series(1, 20) g WHERE w.name = 'live'`,
		`INSERT INTO leads (workspace_id, first_name, last_name, company_domain) SELECT w.id, 'Find', 'Me' || g, 'find' || g || '.test'
		 FROM workspaces w, generate_series(1, 20) g WHERE w.name = 'live'`,
		`INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at) SELECT id, workspace_id, now() - interval '1 minute'
		 FROM leads WHERE first_name = 'Find'`,
	} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	if _, err := sequence.Enroll(ctx, db.Pool, sequence.EnrollRequest{Workspace: "live", Campaign: "live"}, now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	windows, err := store.PruneSendWindows(ctx, tx, sequence.BounceWindow)
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	for _, r := range prune.Rules {
		b, err := store.Prune(ctx, tx, string(r.Table), store.PruneArgs{Batch: 100000, Cutoff: now.Add(-r.Floor), Windows: windows})
		if err != nil {
			t.Fatal(err)
		}
		held += b.Deleted
	}
	if held == 0 {
		t.Fatal("the open prune batch deleted nothing: no locks to test against")
	}

	impatient, err := store.Open(ctx, store.Config{URL: db.TickURL(), LockTimeout: 200 * time.Millisecond, MaxConns: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	mailer := sequence.NewMailer(sequence.MailerOptions{})
	defer mailer.Close()
	sent, err := sequence.RunTick(ctx, impatient, sequence.TickOptions{Mailer: mailer, MaxDuration: time.Minute})
	if err != nil {
		t.Fatalf("email tick beside an open prune batch: %v", err)
	}
	if sent.Sent != due {
		t.Errorf("email tick sent %d of %d due steps beside an open prune batch: %v", sent.Sent, due, sent.Outcomes)
	}
	g := guard.New(impatient, guard.Config{Providers: map[string]providerspec.Limits{"findymail": {}}}, nil)
	found, err := enrich.RunTick(ctx, impatient, enrich.TickConfig{Finders: []enrich.Finder{notFound{}}, Guard: g, MaxDuration: time.Minute})
	if err != nil {
		t.Fatalf("enrich tick beside an open prune batch: %v", err)
	}
	if found.Outcomes.NotFound != 20 || found.ProviderCalls["findymail"] != 20 {
		t.Errorf("enrich tick: %d not_found, %v calls; want 20 and 20", found.Outcomes.NotFound, found.ProviderCalls)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
