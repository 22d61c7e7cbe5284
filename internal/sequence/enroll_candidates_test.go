package sequence

import (
	"testing"

	"github.com/rindactl/rindactl/internal/store"
)

// Which candidates are enrolled, and how the others are counted.
func TestEnrollable(t *testing.T) {
	t.Parallel()
	var res EnrollResult
	got := res.enrollable([]store.EnrollCandidate{
		{LeadID: 1},
		{LeadID: 2, Suppressed: true},
		{LeadID: 3, Duplicate: true},
		{LeadID: 4, Suppressed: true, Duplicate: true}, // suppressed is said first
		{LeadID: 5},
	})
	if len(got) != 2 || got[0].LeadID != 1 || got[1].LeadID != 5 || res.Suppressed != 2 || res.Duplicates != 1 {
		t.Fatalf("enrollable %+v, result %+v; want leads 1 and 5, 2 suppressed, 1 duplicate", got, res)
	}
}
