package status_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The scenario: 900 overdue first steps on a mailbox at 114 a day,
// a three-step campaign (follow-ups 2 and 3 days apart) with
// follow_ups_first, the default. Each day's follow-ups of the steps sent
// before take the cap first, so the backlog goes out in about 21 days, not
// the 8 that 900 / 114 gives. The estimate after the first tick is
// compared with email ticks run every 12 hours (storetest.ShiftTime) until
// every first step is sent: within 20%. Before, it said 6d21h where the
// ticks took 20 days.
func TestDrainEstimateCountsTheFollowUpsThatGoFirst(t *testing.T) {
	t.Parallel()
	const leads, step = 900, 12 * time.Hour
	ctx := context.Background()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{CountOnly: true})
	doc := fmt.Sprintf(`workspace: acme
name: q4
mailboxes:
  - address: sdr01@acme.test
    smtp_url: %s
    daily_cap: 114
steps:
  - subject: "Hi"
    body: "Hello"
  - delay: 48h
    body: "Following up"
  - delay: 72h
    body: "Last one"
`, srv.URL(""))
	c, err := sequence.ParseCampaign(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.ImportCampaign(ctx, db.Pool, c); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email, timezone)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test', 'UTC' FROM workspaces w, generate_series(1, $1) g`, leads); err != nil {
		t.Fatal(err)
	}
	if _, err := sequence.Enroll(ctx, db.Pool, sequence.EnrollRequest{Workspace: "acme", Campaign: "q4"}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	mailer := sequence.NewMailer(sequence.MailerOptions{Timeout: 10 * time.Second})
	t.Cleanup(func() { _ = mailer.Close() })
	tickPool := db.TickPool(t)
	tick := func() {
		if _, err := sequence.RunTick(ctx, tickPool, sequence.TickOptions{Mailer: mailer}); err != nil {
			t.Fatal(err)
		}
	}
	firstSteps := func() int {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE status = 'sent' AND step = 1`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tick()
	r, err := status.Build(ctx, db.Pool, time.Now(), status.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Email.Drain
	if d.EstimatedSeconds == nil || r.Email.Overdue != int64(leads-firstSteps()) {
		t.Fatalf("after the first tick: overdue %d, %d first steps sent, drain %+v", r.Email.Overdue, firstSteps(), d)
	}
	estimate := time.Duration(*d.EstimatedSeconds) * time.Second

	var took time.Duration
	for firstSteps() < leads {
		if took > 60*24*time.Hour {
			t.Fatalf("%d of %d first steps sent after %s; estimated %s", firstSteps(), leads, took, estimate)
		}
		storetest.ShiftTime(t, db.Pool, step)
		took += step
		tick()
	}
	t.Logf("estimated %s (limited by %s), the ticks took %s", estimate, d.LimitedBy, took)
	if diff := (estimate - took).Abs(); diff*5 > took {
		t.Errorf("estimated %s (limited by %s), the ticks took %s: off by more than 20%%", estimate, d.LimitedBy, took)
	}
}
