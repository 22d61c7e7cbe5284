package status_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// A warming-up mailbox shows its cap for today, not its final daily cap.
func TestStatusShowsTodaysRampCap(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, `
INSERT INTO workspaces (name) VALUES ('acme');
INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap, ramp_start, ramp_step, ramp_every, ramp_max, ramp_level, ramp_next_at)
VALUES (1, 'new@acme.test', 'smtp://mx.acme.test', 150, 20, 10, '1 day', 200, 2, :now + interval '5 hours'),
       (1, 'old@acme.test', 'smtp://mx.acme.test', 150, 0, 0, '0', 0, 0, NULL),
       (1, 'done@acme.test', 'smtp://mx.acme.test', 50, 20, 10, '1 day', 200, 9, :now + interval '5 hours');`, fixedNow)
	r, err := status.Build(context.Background(), db.Pool, fixedNow, status.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]int{}
	for _, m := range r.Email.Mailboxes {
		caps[m.Address] = m.CapToday
		if m.Address == "new@acme.test" && (m.Remaining != 40 || m.RampNextAt == nil) {
			t.Errorf("ramping mailbox = %+v, want 40 remaining and its next growth", m)
		}
	}
	for _, m := range r.Email.Mailboxes {
		if m.Address == "done@acme.test" && m.RampNextAt != nil {
			t.Errorf("ramp past its daily cap still shows a next growth: %+v", m)
		}
	}
	if caps["new@acme.test"] != 40 || caps["old@acme.test"] != 150 || caps["done@acme.test"] != 50 {
		t.Errorf("caps today = %v, want 40 (20 + 2×10) and 150", caps)
	}
	var out bytes.Buffer
	if err := status.WriteTable(&out, r, status.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 / 40 ramp") || !strings.Contains(out.String(), "0 / 150") {
		t.Errorf("table lacks today's caps:\n%s", out.String())
	}
}

// `why` names a warm-up ramp's cap as what holds a step back.
func TestWhyNamesTheRampCap(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seed(t, db, incidentSQL, fixedNow)
	ctx := context.Background()
	var id int64
	if err := db.Pool.QueryRow(ctx, "SELECT id FROM enrollments WHERE campaign_id = 1 AND lead_id = 38").Scan(&id); err != nil {
		t.Fatal(err)
	}
	// ana sent 30 of her daily cap of 35; warming up, her cap today is 20.
	if _, err := db.Pool.Exec(ctx, `UPDATE mailboxes SET ramp_start = 10, ramp_step = 10, ramp_every = '1 day', ramp_max = 100, ramp_level = 1
		WHERE address = 'ana@acme.test'`); err != nil {
		t.Fatal(err)
	}
	x, err := status.ExplainEnrollment(ctx, db.Pool, fixedNow, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := status.HoldCodes(x.Holds); got != "daily_cap_reached" || !strings.Contains(x.Holds[0].Detail, "cap of 20") {
		t.Errorf("holds %q (%+v), want the ramp's cap of 20 reached", got, x.Holds)
	}
	// With a human gap, the mailbox's next turn is named too.
	if _, err := db.Pool.Exec(ctx, `UPDATE mailboxes SET ramp_start = 0, gap_min = '1 minute', gap_max = '3 minutes',
		next_send_not_before = $1::timestamptz + interval '2 minutes' WHERE address = 'ana@acme.test'`, fixedNow); err != nil {
		t.Fatal(err)
	}
	if x, err = status.ExplainEnrollment(ctx, db.Pool, fixedNow, id); err != nil {
		t.Fatal(err)
	}
	if got := status.HoldCodes(x.Holds); got != "gap" || !strings.Contains(x.Holds[0].Detail, "until 2026-06-05 05:57:00Z") {
		t.Errorf("holds %q (%+v), want the gap until 05:57", got, x.Holds)
	}
}
