package status_test

import (
	"context"
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
