package sequence

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Each provider reply goes through the real server and go-mail, so the codes
// are parsed exactly as they will be in production.
func TestClassifyDeliveryThroughSMTP(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		rule smtptest.Rule
		want DeliveryKind
	}{
		{"gmail daily limit", smtptest.Rule{Stage: smtptest.StageMail, Code: 550, Enhanced: "5.4.5", Message: "Daily user sending limit exceeded"}, DeliveryMailboxQuota},
		{"gmail limit after data", smtptest.Rule{Stage: smtptest.StageData, Code: 550, Enhanced: "5.4.5", Message: "Daily sending quota exceeded"}, DeliveryMailboxQuota},
		{"microsoft quota", smtptest.Rule{Stage: smtptest.StageData, Code: 554, Enhanced: "5.2.0", Message: "STOREDRV.Submission.Exception:SubmissionQuotaExceededException"}, DeliveryMailboxQuota},
		{"reputation 421", smtptest.Rule{Stage: smtptest.StageMail, Code: 421, Enhanced: "4.7.0", Message: "Try again later, closing connection"}, DeliveryMailboxThrottled},
		{"gmail rate 4.7.28", smtptest.Rule{Stage: smtptest.StageRcpt, Code: 451, Enhanced: "4.7.28", Message: "unusual rate of unsolicited mail"}, DeliveryMailboxThrottled},
		{"greylisting", smtptest.Rule{Stage: smtptest.StageRcpt, Code: 451, Enhanced: "4.7.1", Message: "Greylisted, try again"}, DeliveryTransient},
		{"mailbox full", smtptest.Rule{Stage: smtptest.StageRcpt, Code: 452, Enhanced: "4.2.2", Message: "Mailbox full"}, DeliveryTransient},
		{"unknown user", smtptest.Rule{Stage: smtptest.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"}, DeliveryBounced},
		{"bad address syntax", smtptest.Rule{Stage: smtptest.StageRcpt, Code: 553, Enhanced: "5.1.3", Message: "Bad recipient address syntax"}, DeliveryBounced},
		{"policy rejection", smtptest.Rule{Stage: smtptest.StageData, Code: 550, Enhanced: "5.7.1", Message: "Message rejected as spam"}, DeliveryRejected},
		{"sender refused", smtptest.Rule{Stage: smtptest.StageMail, Code: 553, Enhanced: "5.7.1", Message: "Sender not allowed"}, DeliveryMailboxRefused},
		// Issue 27: a 5.1.x to MAIL FROM names the sender, not the lead:
		// it was taken for a bounce (lead bounced, its address suppressed).
		{"sender unknown at MAIL", smtptest.Rule{Stage: smtptest.StageMail, Code: 550, Enhanced: "5.1.1", Message: "<sdr01@acme.test>: Sender address rejected: User unknown"}, DeliveryMailboxRefused},
		{"connection dropped mid-DATA", smtptest.Rule{Stage: smtptest.StageData, Close: true}, DeliveryUnknown},
		{"connection dropped after the final dot", smtptest.Rule{Stage: smtptest.StageData, Close: true, AfterDot: true}, DeliveryUnknown},
		{"connection dropped at MAIL", smtptest.Rule{Stage: smtptest.StageMail, Close: true}, DeliveryTransient},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.New(t, smtptest.Options{})
			srv.Script(tc.rule)
			err := sendOne(t, srv, "")
			var de *DeliveryError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *DeliveryError", err)
			}
			if de.Kind != tc.want {
				t.Errorf("kind = %s (code %d %s), want %s; err: %v", de.Kind, de.Code, de.Enhanced, tc.want, err)
			}
			if !tc.rule.Close && (de.Code != tc.rule.Code || de.Enhanced != tc.rule.Enhanced) {
				t.Errorf("codes = %d %s, want %d %s", de.Code, de.Enhanced, tc.rule.Code, tc.rule.Enhanced)
			}
		})
	}
}

func TestClassifyDeliveryAuthFailure(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw"}})
	srv.Script(smtptest.Rule{Stage: smtptest.StageAuth, Code: 535, Enhanced: "5.7.8", Message: "Username and Password not accepted"})
	err := sendOne(t, srv, "sdr01")
	de := ClassifyDelivery(err)
	if de == nil || de.Kind != DeliveryMailboxAuthFailed || de.Code != 535 || de.Enhanced != "5.7.8" {
		t.Fatalf("err = %v (%+v), want mailbox_auth_failed 535 5.7.8", err, de)
	}
	// Issue 27: a pause, never a disable (it was until an operator acted).
	if pause, d := de.PausesMailbox(); !pause || d != MailboxRefusedPauseDefault {
		t.Errorf("PausesMailbox = %v %s, want %s", pause, d, MailboxRefusedPauseDefault)
	}
}

// Issue 27: a 5xx to AUTH other than a failed login (an app password
// required) refuses the session: the mailbox pauses. It was a rejected
// lead, failed for good.
func TestClassifyDeliveryAuthRefused(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw"}})
	srv.Script(smtptest.Rule{Stage: smtptest.StageAuth, Code: 534, Enhanced: "5.7.9", Message: "Application-specific password required"})
	de := ClassifyDelivery(sendOne(t, srv, "sdr01"))
	if de == nil || de.Kind != DeliveryMailboxRefused {
		t.Fatalf("AUTH 534 5.7.9: %+v, want mailbox_refused", de)
	}
	if pause, d := de.PausesMailbox(); !pause || d != MailboxRefusedPauseDefault {
		t.Errorf("PausesMailbox = %v %s, want %s", pause, d, MailboxRefusedPauseDefault)
	}
}

func TestGreylistOnceThenDelivered(t *testing.T) {
	t.Parallel()
	srv := smtptest.New(t, smtptest.Options{})
	srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 451, Enhanced: "4.7.1", Message: "Greylisted", Times: 1})
	if de := ClassifyDelivery(sendOne(t, srv, "")); de == nil || de.Kind != DeliveryTransient {
		t.Fatalf("first send: %v, want transient", de)
	}
	if err := sendOne(t, srv, ""); err != nil {
		t.Fatalf("second send: %v", err)
	}
	if srv.Accepted() != 1 {
		t.Errorf("accepted %d, want 1", srv.Accepted())
	}
}

func TestDeliveryPauses(t *testing.T) {
	t.Parallel()
	for kind, want := range map[DeliveryKind]time.Duration{
		DeliveryMailboxQuota:      MailboxQuotaPauseDefault,
		DeliveryMailboxThrottled:  MailboxThrottlePauseDefault,
		DeliveryMailboxRefused:    MailboxRefusedPauseDefault,
		DeliveryMailboxAuthFailed: MailboxRefusedPauseDefault,
	} {
		if pause, d := (&DeliveryError{Kind: kind}).PausesMailbox(); !pause || d != want {
			t.Errorf("%s: PausesMailbox = %v %s, want %s", kind, pause, d, want)
		}
	}
	for _, kind := range []DeliveryKind{DeliveryTransient, DeliveryBounced, DeliveryRejected} {
		if pause, _ := (&DeliveryError{Kind: kind}).PausesMailbox(); pause {
			t.Errorf("%s pauses the mailbox", kind)
		}
	}
	if TransientBackoff(1) != TransientBackoffBaseDefault || TransientBackoff(2) != 2*TransientBackoffBaseDefault ||
		TransientBackoff(50) != TransientBackoffMaxDefault {
		t.Errorf("backoff = %s %s %s", TransientBackoff(1), TransientBackoff(2), TransientBackoff(50))
	}
}

func sendOne(t *testing.T, srv *smtptest.Server, user string) error {
	t.Helper()
	c := testCampaign(t, "")
	mb := testMailbox(t, srv, "sdr01@acme.test", user, "")
	if user != "" {
		mb.PasswordEnv = "P"
	}
	m := NewMailer(MailerOptions{Timeout: 5 * time.Second, LookupEnv: func(string) (string, bool) { return "pw", true }})
	defer m.Close()
	msg, err := c.Compose(0, Lead{FirstName: "L", Email: "lead@x.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	return m.Send(context.Background(), mb, msg)
}

// Issue 29: only a failure without any reply, before the final dot, once
// the tick's deadline has passed is the tick's cut.
func TestCutByTick(t *testing.T) {
	t.Parallel()
	past, future := time.Now().Add(-time.Millisecond), time.Now().Add(time.Hour)
	cases := []struct {
		name string
		de   DeliveryError
		hard time.Time
		want DeliveryKind
	}{
		{"no reply after the deadline", DeliveryError{Kind: DeliveryTransient, Phase: PhaseRcpt}, past, DeliveryCancelled},
		{"no greeting after the deadline", DeliveryError{Kind: DeliveryTransient, Phase: PhaseConnect}, past, DeliveryCancelled},
		{"server timeout before the deadline", DeliveryError{Kind: DeliveryTransient, Phase: PhaseRcpt}, future, DeliveryTransient},
		{"no deadline", DeliveryError{Kind: DeliveryTransient, Phase: PhaseRcpt}, time.Time{}, DeliveryTransient},
		{"421 after the deadline", DeliveryError{Kind: DeliveryTransient, Code: 421, Phase: PhaseMail}, past, DeliveryTransient},
		{"after the final dot", DeliveryError{Kind: DeliveryUnknown, Phase: PhaseDataEnd}, past, DeliveryUnknown},
		{"quota after the deadline", DeliveryError{Kind: DeliveryMailboxQuota, Code: 550}, past, DeliveryMailboxQuota},
	}
	for _, tc := range cases {
		de := tc.de
		if got := cutByTick(context.Background(), &de, tc.hard).Kind; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// A signal's grace closed the connection (the send context ended)
	// before the deadline: the tick's cut too.
	signalled, cancel := context.WithCancel(context.Background())
	cancel()
	if got := cutByTick(signalled, &DeliveryError{Kind: DeliveryTransient, Phase: PhaseRcpt}, future).Kind; got != DeliveryCancelled {
		t.Errorf("no reply after the signal's grace: %s, want %s", got, DeliveryCancelled)
	}
	// Issue 37: after the dot the kind stays unknown, marked as the tick's
	// cut, and the error names the cut, not the closed connection.
	closed := errors.New("read tcp: use of closed network connection")
	for _, c := range []struct {
		ctx   context.Context
		hard  time.Time
		cause string
	}{{context.Background(), past, "deadline"}, {signalled, future, "signal"}} {
		de := cutByTick(c.ctx, &DeliveryError{Kind: DeliveryUnknown, Phase: PhaseDataEnd, Err: &PhaseError{Phase: PhaseDataEnd, Err: closed}}, c.hard)
		if de.Kind != DeliveryUnknown || !de.TickCut || !strings.Contains(de.Error(), c.cause) || strings.Contains(de.Error(), "closed network") || !errors.Is(de, closed) {
			t.Errorf("cut by the %s after the dot: %+v (%v), want unknown, TickCut, naming the %s", c.cause, de, de, c.cause)
		}
	}
	// The server's own silence past its DATA timeout, the tick still
	// running: not the tick's cut.
	if de := cutByTick(context.Background(), &DeliveryError{Kind: DeliveryUnknown, Phase: PhaseDataEnd}, future); de.TickCut {
		t.Errorf("server timeout after the dot marked as the tick's cut: %+v", de)
	}
}
