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

// The drain estimate against what the email ticks then take: a backlog is
// set up, one tick runs (the estimate needs a measured tick), status
// estimates the rest, then time moves forward step by step (every stored
// instant moves back, as storetest.ShiftTime does) with a tick at each step
// until nothing is overdue. The estimate must be within 10% of the time the
// ticks took. Before, the ramp-only mailbox printed "about -" (0 seconds)
// and rows backing off 5 minutes "about 1s".
func TestDrainEstimateMatchesTheTicks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		mailboxes string // YAML of the mailboxes' caps
		leads     int
		step      time.Duration
		refuse    int // first RCPTs answered 451: those rows back off
	}{
		{"ramp only", "    daily_cap: 0\n    ramp: {start: 3, step: 1, every: 1d, max: 10}\n", 17, time.Hour, 0},
		{"daily cap over three mailboxes", "    daily_cap: 20\n", 150, time.Hour, 0},
		{"backing off", "    daily_cap: 0\n", 12, time.Minute, 12},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.New(t)
			srv := smtptest.New(t, smtptest.Options{CountOnly: true})
			if tc.refuse > 0 {
				srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 451, Enhanced: "4.3.0", Message: "try again later", Times: tc.refuse})
			}
			var doc strings.Builder
			doc.WriteString("workspace: acme\nname: q4\nmailboxes:\n")
			n := 1
			if strings.Contains(tc.name, "three") {
				n = 3
			}
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&doc, "  - address: sdr%02d@acme.test\n    smtp_url: %s\n%s", i, srv.URL(""), tc.mailboxes)
			}
			doc.WriteString("steps:\n  - subject: \"Hi\"\n    body: \"Hello\"\n")
			c, err := sequence.ParseCampaign(strings.NewReader(doc.String()))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sequence.ImportCampaign(ctx, db.Pool, c); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email, timezone)
				SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test', 'UTC' FROM workspaces w, generate_series(1, $1) g`, tc.leads); err != nil {
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
			tick()
			r, err := status.Build(ctx, db.Pool, time.Now(), status.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			d := r.Email.Drain
			if d.EstimatedSeconds == nil || r.Email.Overdue == 0 {
				t.Fatalf("after the first tick: overdue %d, drain %+v; want a backlog and an estimate", r.Email.Overdue, d)
			}
			estimate := time.Duration(*d.EstimatedSeconds) * time.Second

			var took time.Duration
			for sent := 0; sent < tc.leads; {
				if took > 3*estimate+10*tc.step {
					t.Fatalf("%d of %d sent after %s; estimated %s", sent, tc.leads, took, estimate)
				}
				storetest.ShiftTime(t, db.Pool, tc.step)
				took += tc.step
				tick()
				if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE status = 'sent'`).Scan(&sent); err != nil {
					t.Fatal(err)
				}
			}
			if diff := (estimate - took).Abs(); diff*10 > took {
				t.Errorf("estimated %s (limited by %s), the ticks took %s: off by more than 10%%", estimate, d.LimitedBy, took)
			}
			t.Logf("estimated %s (limited by %s), the ticks took %s", estimate, d.LimitedBy, took)
		})
	}
}
