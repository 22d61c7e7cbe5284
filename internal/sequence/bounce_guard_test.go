package sequence

import (
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
)

func TestBounceVerdict(t *testing.T) {
	t.Parallel()
	limits := store.MailboxBounces{RateMax: 0.03, StreakMax: 5}
	for _, tc := range []struct {
		sends, bounces, streak int64
		pause                  bool
		reason                 string
	}{
		{200, 5, 1, false, ""},
		{200, 6, 0, true, "bounce rate 3.0%: 6 of the last 200 sends hard-bounced (limit 3.0% of 200)"},
		{50, 6, 0, true, "bounce rate 12.0%"},
		{10, 1, 1, false, ""}, // a young mailbox's first bounce is not 10%
		{7, 5, 5, true, "the last 5 sends hard-bounced in a row (limit 5 in a row)"},
		{0, 0, 0, false, ""},
	} {
		b := limits
		b.Sends, b.Bounces, b.Streak = tc.sends, tc.bounces, tc.streak
		pause, reason := bounceVerdict(b)
		if pause != tc.pause || !strings.Contains(reason, tc.reason) {
			t.Errorf("%d/%d, %d in a row: %v %q, want %v %q", tc.bounces, tc.sends, tc.streak, pause, reason, tc.pause, tc.reason)
		}
	}
	off := store.MailboxBounces{Sends: 200, Bounces: 200, Streak: 200}
	if pause, _ := bounceVerdict(off); pause {
		t.Error("limits 0 must turn the guard off")
	}
}

func TestCampaignBounceGuardField(t *testing.T) {
	t.Parallel()
	base := "workspace: acme\nname: q4\nmailboxes:\n  - address: a@acme.test\n    smtp_url: smtp://127.0.0.1:2525\nsteps:\n  - subject: s\n    body: b\n"
	for doc, want := range map[string]string{
		base: "",
		strings.Replace(base, "mailboxes:", "bounce_guard: {rate: 2.5%, in_a_row: 0}\nmailboxes:", 1): "",
		strings.Replace(base, "mailboxes:", "bounce_guard: {rate: 3}\nmailboxes:", 1):                 "bounce_guard.rate: \"3\" is not a percentage",
		strings.Replace(base, "mailboxes:", "bounce_guard: {in_a_row: -1}\nmailboxes:", 1):            "bounce_guard.in_a_row: -1 is negative",
		strings.Replace(base, "mailboxes:", "bounce_guard: {rates: 3%}\nmailboxes:", 1):               "bounce_guard.rates: unknown field",
	} {
		c, err := ParseCampaign(strings.NewReader(doc))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", doc, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("error %v, want %q", err, want)
		case want == "" && strings.Contains(doc, "2.5%") && c.BounceGuard != (BounceGuard{RateMax: 0.025, StreakMax: 0}):
			t.Errorf("guard = %+v", c.BounceGuard)
		case want == "" && !strings.Contains(doc, "bounce_guard") && c.BounceGuard != (BounceGuard{RateMax: BounceRateMaxDefault, StreakMax: BounceStreakMaxDefault}):
			t.Errorf("default guard = %+v", c.BounceGuard)
		}
	}
}

// Hard bounces at SMTP time count too: three in a row (the campaign's
// limit) pause the mailbox with a mailbox_paused event naming the rate, the
// rest of its queue is released, and the next tick sends nothing from it.
func TestTickBounceRatePausesMailbox(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 12, mailboxes: 1, extraYAML: "bounce_guard: {rate: 0%, in_a_row: 3}\n"})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"})
	f.tick(TickOptions{})
	if got := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until > now() AND pause_reason LIKE 'bounce rate 100.0%%: the last % sends hard-bounced in a row%'`); got != 1 {
		t.Fatalf("mailbox not paused for its bounce rate: %v", f.count(`SELECT count(*) FROM mailboxes WHERE paused_until > now()`))
	}
	if got := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_paused' AND payload->>'kind' = 'bounce_rate' AND payload->>'reason' LIKE 'bounce rate %'`); got != 1 {
		t.Errorf("%d bounce-rate mailbox_paused events, want 1", got)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`); n < 3 {
		t.Errorf("%d sends recorded as hard bounces, want at least 3", n)
	}
	attempts := f.srv.Attempts("sdr01@acme.test")
	if attempts < 3 {
		t.Fatalf("%d attempts before the pause", attempts)
	}
	f.due()
	f.tick(TickOptions{})
	if got := f.srv.Attempts("sdr01@acme.test"); got != attempts {
		t.Errorf("the paused mailbox was tried %d more times", got-attempts)
	}
}
