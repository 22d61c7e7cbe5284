package status_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 30: `status --overdue` shows the late email backlog, but the report
// also counted every lead ever enriched (a scan of lead_enrichment), so
// its time grew with the history. Built for --overdue it reads none of it;
// the full report still does.
func TestOverdueReportReadsNoEnrichmentHistory(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		l AS (INSERT INTO leads (workspace_id, first_name) SELECT w.id, 'F' FROM w, generate_series(1, 5000) RETURNING id, workspace_id)
		INSERT INTO lead_enrichment (lead_id, workspace_id, status) SELECT id, workspace_id, 'enriched' FROM l`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		filter status.Filter
		reads  bool
	}{{status.Filter{EmailOnly: true}, false}, {status.Filter{}, true}} {
		scans := storetest.CountSeqScans(t, db.Pool, db.URL)
		rep, err := status.Build(ctx, scans.Pool, time.Now(), tt.filter)
		if err != nil {
			t.Fatal(err)
		}
		read := scans.SeqScanReads(t, "lead_enrichment")["lead_enrichment"]
		if got := read > 0; got != tt.reads {
			t.Errorf("%+v: lead_enrichment rows read %d, want reads %v", tt.filter, read, tt.reads)
		}
		if !tt.reads && rep.Enrich.ByStatus["enriched"] != 0 {
			t.Errorf("the --overdue report counted enrichment: %+v", rep.Enrich)
		}
	}
}

// Nor the tick history: each kind's newest failure was looked for by
// walking the kind's runs newest first, all of them for a kind that never
// failed (a healthy one). A year of email runs (2M in the long history
// benchmark) made `status --overdue` take 1–2 s. Bound by rows read.
func TestOverdueReportReadsNoTickHistory(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	const runs = 20000
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, exit_status)
		SELECT (ARRAY['enrich', 'email', 'events', 'inbox'])[1 + g % 4], 'old-' || g, 'h', 1,
		       now() - interval '300 days' + g * interval '1 minute', now() - interval '300 days' + g * interval '1 minute' + interval '5 seconds',
		       CASE WHEN g % 4 = 0 AND g % 100 = 0 THEN 1 ELSE 0 END
		FROM generate_series(1, 20000) g ORDER BY g`); err != nil {
		t.Fatal(err)
	}
	scans := storetest.CountSeqScans(t, db.Pool, db.URL)
	rep, err := status.Build(ctx, scans.Pool, time.Now(), status.Filter{EmailOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r := scans.Reads(t, "tick_runs")["tick_runs"]
	if read := r.Seq + r.Index; read > runs/10 {
		t.Errorf("status --overdue read %d of %d tick_runs rows (%d by sequential scans, %d by index), want at most %d",
			read, runs, r.Seq, r.Index, runs/10)
	}
	if len(rep.Ticks) == 0 {
		t.Errorf("the report shows no tick kinds: %+v", rep)
	}
}

// Nor the leads of ended sequences: the due rows were joined to leads by
// hashing every lead. The planner takes every active enrollment for due
// (their step_due_at looks past by the whole table's statistics, though a
// running sequence's next step is ahead), and with a year of history
// (2M leads) `status --overdue` read them all for 3,000 due rows: 0.3 s,
// 2.1 s cold at 5M. A small due backlog reaches its leads by key.
func TestOverdueReportReadsNoLeadHistory(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	const leads, running, due = 20000, 4000, 50
	// The seed is setup, not what is measured: under CI's stress runs its
	// 20,000-row insert outran the pool's statement_timeout, so it runs
	// in a transaction without one.
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'q4' FROM w RETURNING id),
		m AS (INSERT INTO mailboxes (workspace_id, address, smtp_url) SELECT id, 'sdr@acme.test', 'smtp://127.0.0.1:1' FROM w RETURNING id),
		l AS (INSERT INTO leads (workspace_id, external_id, first_name, email)
		      SELECT w.id, 'p' || g, 'F', 'p' || g || '@x.example' FROM w, generate_series(1, $1::int) g RETURNING id, workspace_id)
		INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id, status, next_send_at)
		SELECT c.id, l.id, l.workspace_id, m.id,
		       CASE WHEN l.id % ($1::int / $2::int) = 0 THEN 'active' ELSE 'completed' END,
		       now() - interval '300 days' + l.id * interval '20 minutes'
		FROM c, m, l`, leads, running); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The running ones are ahead but for due of them; the history behind.
	if _, err := db.Pool.Exec(ctx, fmt.Sprintf(`
		SET LOCAL statement_timeout = 0;
		UPDATE enrollments SET next_send_at = now() + interval '1 day', step_due_at = now() + interval '1 day' WHERE status = 'active';
		UPDATE enrollments SET next_send_at = now() - interval '1 hour', step_due_at = now() - interval '1 hour'
		WHERE id IN (SELECT id FROM enrollments WHERE status = 'active' ORDER BY id LIMIT %d);
		ANALYZE leads, enrollments`, due)); err != nil {
		t.Fatal(err)
	}
	scans := storetest.CountSeqScans(t, db.Pool, db.URL)
	rep, err := status.Build(ctx, scans.Pool, time.Now(), status.Filter{EmailOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r := scans.Reads(t, "leads")["leads"]
	if read := r.Seq + r.Index; read > 10*due {
		t.Errorf("status --overdue read %d of %d leads (%d by sequential scans, %d by index) for %d due rows, want at most %d",
			read, leads, r.Seq, r.Index, due, 10*due)
	}
	if rep.Email.Overdue != due {
		t.Errorf("the report shows %d overdue, want %d", rep.Email.Overdue, due)
	}
}
