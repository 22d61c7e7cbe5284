package prune

import (
	"testing"

	"github.com/rindactl/rindactl/internal/store"
)

// How one batch adds to its table's report.
func TestTableReportAdd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		dryRun bool
		b      store.PruneBatch
		want   TableReport
	}{
		{"deleted all it matched", false, store.PruneBatch{Scanned: 10, Matched: 6, Deleted: 6}, TableReport{Batches: 2, Scanned: 15, Deleted: 9, Skipped: 1}},
		{"some held", false, store.PruneBatch{Scanned: 10, Matched: 6, Deleted: 4}, TableReport{Batches: 2, Scanned: 15, Deleted: 7, Skipped: 3}},
		{"dry run counts what matched", true, store.PruneBatch{Scanned: 10, Matched: 6}, TableReport{Batches: 2, Scanned: 15, Deleted: 9, Skipped: 1}},
		{"the walk ends", false, store.PruneBatch{Scanned: 2, Done: true}, TableReport{Batches: 2, Scanned: 7, Deleted: 3, Skipped: 1, Done: true}},
	} {
		tr := TableReport{Batches: 1, Scanned: 5, Deleted: 3, Skipped: 1}
		tr.add(tc.b, tc.dryRun)
		if tr != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, tr, tc.want)
		}
	}
}
