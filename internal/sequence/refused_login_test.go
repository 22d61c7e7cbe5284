package sequence

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Issue 27: "A 5xx to HELO/EHLO, MAIL FROM for the sender, or AUTH pauses
// the mailbox with a mailbox_paused event and fails no lead." A 535 to
// AUTH, a 5xx to MAIL FROM and an unset password variable disabled the
// mailbox (mailbox_disabled) for good: nothing but SQL brought it back.
// They pause it for an hour, with an event naming the reply; once the
// password (or the server) is fixed, a tick after the pause sends.
func TestTickRefusedLoginOrSenderPausesMailbox(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		rule *smtptest.Rule
		// envMissing: the password variable is unset on the first tick.
		envMissing bool
		kind       DeliveryKind
		code       int
		reply      string
	}{
		{name: "535 to AUTH", rule: &smtptest.Rule{Stage: smtptest.StageAuth, From: "sdr01", Code: 535, Enhanced: "5.7.8", Message: "Username and Password not accepted", Times: 1},
			kind: DeliveryMailboxAuthFailed, code: 535, reply: "Username and Password not accepted"},
		{name: "553 to MAIL FROM", rule: &smtptest.Rule{Stage: smtptest.StageMail, From: "sdr01@acme.test", Code: 553, Enhanced: "5.7.1", Message: "Sender not allowed", Times: 1},
			kind: DeliveryMailboxRefused, code: 553, reply: "Sender not allowed"},
		{name: "550 5.1.1 to MAIL FROM", rule: &smtptest.Rule{Stage: smtptest.StageMail, From: "sdr01@acme.test", Code: 550, Enhanced: "5.1.1", Message: "Sender address rejected: User unknown", Times: 1},
			kind: DeliveryMailboxRefused, code: 550, reply: "Sender address rejected"},
		{name: "password variable unset", envMissing: true, kind: DeliveryMailboxAuthFailed, reply: "RINDA_TEST_PW is not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, steps: oneStep})
			f.pointMailbox("sdr01@acme.test", f.srv.URL("sdr01"))
			f.exec(`UPDATE mailboxes SET password_env = 'RINDA_TEST_PW'`)
			var envSet atomic.Bool
			envSet.Store(!tc.envMissing)
			f.mailer = NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "pw", envSet.Load() }})
			t.Cleanup(func() { _ = f.mailer.Close() })
			if tc.rule != nil {
				f.srv.Script(*tc.rule)
			}

			rep := f.tick(TickOptions{})
			if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Sent != 0 || len(rep.Outcomes) != 2 || rep.Outcomes[OutcomeReleased] != 2 {
				t.Fatalf("tick = %+v, want the mailbox paused and the other rows released", rep)
			}
			if n := f.count(`SELECT count(*) FROM enrollments WHERE status <> 'active' OR attempts > 0`); n != 0 {
				t.Errorf("%d enrollments failed or charged an attempt, want none", n)
			}
			if n := f.count(`SELECT count(*) FROM mailboxes WHERE status = 'active'
				AND paused_until BETWEEN now() + interval '50 minutes' AND now() + interval '70 minutes'`); n != 1 {
				t.Error("the mailbox is not paused for an hour (still active)")
			}
			if n := f.count(`SELECT count(*) FROM events WHERE kind <> 'mailbox_paused'`); n != 0 {
				t.Errorf("%d events other than mailbox_paused", n)
			}
			var payload []byte
			if err := f.pool.QueryRow(context.Background(), `SELECT payload FROM events WHERE kind = 'mailbox_paused'`).Scan(&payload); err != nil {
				t.Fatalf("no mailbox_paused event: %v", err)
			}
			var ev struct {
				Kind   string
				Code   int
				Reason string
			}
			if err := json.Unmarshal(payload, &ev); err != nil || ev.Kind != string(tc.kind) || ev.Code != tc.code || !strings.Contains(ev.Reason, tc.reply) {
				t.Errorf("event payload %s, want kind %s, code %d, a reason naming %q", payload, tc.kind, tc.code, tc.reply)
			}

			// Fixed (the password exported, the server's rule spent): a
			// tick within the hour leaves the mailbox alone, the first one
			// after it sends everything.
			envSet.Store(true)
			f.due()
			if rep := f.tick(TickOptions{}); rep.Sent != 0 || rep.Outcomes[OutcomeMailboxPaused] != 0 {
				t.Errorf("a tick within the pause = %+v, want nothing tried", rep)
			}
			f.exec(`UPDATE mailboxes SET paused_until = now() - interval '1 second'`)
			f.due()
			if rep := f.tick(TickOptions{}); rep.Sent != 3 {
				t.Errorf("after the pause: tick = %+v, want all 3 sent", rep)
			}
		})
	}
}
