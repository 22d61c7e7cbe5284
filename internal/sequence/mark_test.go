package sequence

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/enrollment"
)

// Marking by hand ends only active enrollments, suppresses the addresses of
// an unsubscribe, counts ids that do not exist, and records each run.
func TestMarkEnrollments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, dailyCap: 50})
	ctx := context.Background()
	id := func(ext string) int64 {
		return int64(f.count(`SELECT e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.external_id = $1`, ext))
	}

	m, err := MarkEnrollments(ctx, f.pool, []int64{id("ext-1"), 999999}, enrollment.Replied, "dana")
	if err != nil || m.Found != 1 || m.Marked != 1 || m.Suppressed != 0 {
		t.Fatalf("replied: %+v %v", m, err)
	}
	m, err = MarkEnrollments(ctx, f.pool, []int64{id("ext-1"), id("ext-2")}, enrollment.Unsubscribed, "dana")
	// An unsubscribe suppresses the address whatever state its enrollment is in.
	if err != nil || m.Found != 2 || m.Marked != 1 || m.Suppressed != 2 {
		t.Fatalf("unsubscribed (ext-1 already ended): %+v %v", m, err)
	}
	if n := f.count(`SELECT count(*) FROM suppressions WHERE email = 'lead2@example.test' AND reason = 'unsubscribed'`); n != 1 {
		t.Fatalf("suppressions of lead2 = %d, want 1", n)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'active'`); n != 1 {
		t.Fatalf("active enrollments = %d, want 1 (ext-3)", n)
	}
	if n := f.count(`SELECT count(*) FROM audit_log WHERE actor = 'dana' AND action = 'enrollment.mark' AND affected = 1`); n != 2 {
		t.Fatalf("audit rows = %d, want 2", n)
	}

	// Anything else is not a reason an operator gives: nothing changes.
	if _, err := MarkEnrollments(ctx, f.pool, []int64{id("ext-3")}, enrollment.Completed, "dana"); err == nil {
		t.Fatal("marking as completed succeeded")
	}
	if n := f.count(`SELECT count(*) FROM audit_log`); n != 2 {
		t.Fatalf("audit rows after a refused mark = %d, want 2", n)
	}
}
