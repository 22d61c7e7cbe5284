package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// A prune batch of tick_runs reads its batch and a few rows per keeper,
// not the table. Every batch looked up each kind's newest success by
// finish time with no index to find it: a sort of every success of the
// kind, each batch. The long history benchmark (2M runs) pruned them at
// about 1,000 rows/s, sends at about 100,000. Bound by rows read, never by
// time.
func TestPruneTickRunsBatchReadsNotTheTable(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	const runs, batch = 20000, 100
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, exit_status)
		SELECT (ARRAY['enrich', 'email', 'events', 'inbox'])[1 + g % 4], 'old-' || g, 'h', 1,
		       now() - interval '300 days' + g * interval '1 minute', now() - interval '300 days' + g * interval '1 minute' + interval '5 seconds',
		       CASE WHEN g % 50 = 0 THEN 1 ELSE 0 END
		FROM generate_series(1, 20000) g ORDER BY g`); err != nil {
		t.Fatal(err)
	}
	counter := storetest.CountSeqScans(t, db.Pool, db.URL)
	counter.Reset(t)
	b, err := store.Prune(ctx, counter.Pool, "tick_runs", store.PruneArgs{Batch: batch, Cutoff: time.Now().Add(-48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Deleted != batch {
		t.Fatalf("the batch deleted %d of %d old runs", b.Deleted, batch)
	}
	r := counter.Reads(t, "tick_runs")["tick_runs"]
	// The batch (100), each kind's 16 newest successes and its three other
	// keepers, and the index steps to them: a few hundred rows.
	if read := r.Seq + r.Index; read > 10*batch {
		t.Errorf("one prune batch of %d read %d tick_runs rows (%d by sequential scans, %d by index), want at most %d: not the %d-row table",
			batch, read, r.Seq, r.Index, 10*batch, runs)
	}
}
