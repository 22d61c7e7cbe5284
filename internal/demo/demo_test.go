package demo_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/demo"
	"github.com/rindactl/rindactl/internal/testkit"
)

// binary is the rindactl executable built once for every test here: the
// demo runs its ticks as child processes.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rindactl-demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, err = testkit.Rindactl(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rindactl:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestDemoKeepsEmailGoingWhileFindymailIsExhausted(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	cfg := demo.Config{
		Binary: binary, ServerURL: os.Getenv("DATABASE_URL"),
		// 6 s rounds: a 2 s email tick. With 2 s rounds a CI stress run's
		// email ticks spent 330-540 ms on the first claim and ran out of
		// their 667 ms with 9 of 300 steps sent.
		Leads: 300, Overdue: 100, Mailboxes: 4, Rounds: 3, Interval: 6 * time.Second,
		TempDir: work, Log: t.Logf,
	}
	rep, err := demo.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rounds) != 3 {
		t.Fatalf("%d rounds reported, want 3", len(rep.Rounds))
	}
	// Email must keep going while Findymail is out (the incident's loader
	// never ran). A round's email tick has a third of the round; on a
	// starved machine its first claim can come back past that deadline,
	// and it releases the rows unsent, or a late previous round's
	// follow-ups are not yet due when it claims: its own budget or an
	// empty claim, not enrichment, left it without mail. So a round
	// without email must have run to its deadline or found nothing due,
	// and the exhausted rounds together must have sent mail.
	budget := demo.EmailBudget(cfg)
	exhausted, sentExhausted := 0, 0
	for _, r := range rep.Rounds {
		if !r.FindymailExhausted {
			continue
		}
		exhausted++
		sentExhausted += r.EmailsSent
		if r.EmailsSent == 0 && r.Email.Claimed > 0 && time.Duration(r.Email.DurationMS+1)*time.Millisecond < budget {
			t.Errorf("round %d claimed %d steps but sent no email while Findymail was exhausted, and its email tick stopped after %d ms, before its %s deadline: %+v", r.N, r.Email.Claimed, r.Email.DurationMS, budget, r.Email)
		}
	}
	if sentExhausted == 0 && exhausted > 0 {
		t.Errorf("no email sent in the %d round(s) Findymail was exhausted: %+v", exhausted, rep.Rounds)
	}
	if exhausted == 0 || !rep.Findymail.Exhausted {
		t.Fatalf("Findymail never ran out of credits (%d calls, %d credits): the demo shows nothing", rep.Findymail.Total, rep.Findymail.Credits)
	}
	// Calls admitted before the breaker opened may reach the provider
	// after it on a starved machine (a make test-stress run saw 4 in one
	// window); beyond those, one probe per window.
	if f := rep.Findymail; f.BreakerWindows == 0 || f.AfterBreaker > f.BreakerWindows+f.AdmittedNotStarted {
		t.Errorf("%d Findymail calls started while its breaker was open, %d of them admitted before it opened, %d breaker window(s); want a breaker and at most one probe per window",
			f.AfterBreaker, f.AdmittedNotStarted, f.BreakerWindows)
	}
	if n := rep.LeadsByStatus["enrichment_failed"]; n != 0 {
		t.Errorf("%d leads ended enrichment_failed; want none", n)
	}
	if rep.EnrichedBy["hunter"] == 0 {
		t.Errorf("no lead enriched through the fallback provider: %v", rep.EnrichedBy)
	}
	if len(rep.Spread.ByMailbox) != 4 || rep.Spread.Min == 0 {
		t.Errorf("sends per mailbox %v: want all 4 mailboxes used", rep.Spread.ByMailbox)
	}
	in := rep.Inbox
	if in.RampCapToday != 3 || in.RampSent != 3 || in.RampDue <= 3 || in.RampDue+in.SeasonedSent != 16 {
		t.Errorf("ramp act = %+v: want the fresh mailbox held to 3 of its first steps while the seasoned one sends all of its own", in)
	}
	if in.ReplyStatus != "replied" || in.BounceStatus != "bounced" || !in.Suppressed || in.Outcomes["replied"] != 1 || in.Outcomes["bounced"] != 1 {
		t.Errorf("inbox act = %+v: want a reply and a bounce ending their sequences", in)
	}
	var text strings.Builder
	rep.Render(&text)
	if !strings.Contains(text.String(), "Findymail ran out of credits") {
		t.Errorf("report does not tell the Findymail story:\n%s", text.String())
	}
	if left, _ := os.ReadDir(work); len(left) != 0 {
		t.Errorf("the demo left %d entries in its temp directory", len(left))
	}
}

func TestConfigValidateNamesTheFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  demo.Config
		want string
	}{
		{demo.Config{Binary: "x", Leads: 1, Mailboxes: 0, Rounds: 1}, "--mailboxes"},
		{demo.Config{Binary: "x", Leads: 1, Mailboxes: 1, Rounds: 0}, "--rounds"},
		{demo.Config{Binary: "x", Leads: -1, Mailboxes: 1, Rounds: 1}, "--leads"},
		{demo.Config{Binary: "x", Mailboxes: 1, Rounds: 1}, "nothing to replay"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
	if err := (demo.Config{Binary: "x", Leads: 1, Mailboxes: 18, Rounds: 6}).Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
}

// make demo printed "sent 6 of its 9 due first steps (cap today 3)": its
// inbox act's email tick met a full first claim (the main act's due
// follow-ups) over more mailboxes than --concurrency, claimed again while
// the fresh mailbox waited for a slot, and caps were charged only at the
// record. The demo above is too small for that (4 mailboxes, 100 steps);
// at 18 mailboxes and 1,000 overdue steps over three rounds the ramp line
// sent 4 to 6 of 3 in 3 of 4 runs before caps were charged at the claim
// (issue 23). Only the ramp line is checked: the rounds' pace at this size
// depends on the machine's load.
func TestDemoRampLineHoldsItsCap(t *testing.T) {
	t.Parallel()
	rep, err := demo.Run(context.Background(), demo.Config{
		Binary: binary, ServerURL: os.Getenv("DATABASE_URL"),
		Leads: 300, Overdue: 1000, Mailboxes: 18, Rounds: 3, Interval: 2 * time.Second,
		TempDir: t.TempDir(), Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	if in := rep.Inbox; in.RampCapToday != 3 || in.RampSent != 3 || in.RampDue <= 3 {
		t.Errorf("ramp act = %+v: want the fresh mailbox held to its cap of 3", in)
	}
}
