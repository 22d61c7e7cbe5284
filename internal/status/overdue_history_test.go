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
