package sequence

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
)

// The email tick's decisions, without a database or an SMTP server.

var decideNow = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) // a Wednesday

func claimed(id, mailbox int64, step int) store.ClaimedEnrollment {
	return store.ClaimedEnrollment{ID: id, CampaignID: 1, WorkspaceID: 9, MailboxID: mailbox, Step: step, Attempts: 2,
		DueAt: decideNow.Add(-time.Hour), Email: "ada@example.test"}
}

func onlyUpdate(t *testing.T, o outcome) store.EnrollmentUpdate {
	t.Helper()
	if len(o.set.Enrollments) != 1 {
		t.Fatalf("outcome %s updates %d enrollments, want 1", o.kind, len(o.set.Enrollments))
	}
	return o.set.Enrollments[0]
}

func TestPresendOutcome(t *testing.T) {
	t.Parallel()
	with := func(f func(*store.ClaimedEnrollment)) store.ClaimedEnrollment {
		r := claimed(1, 7, 2)
		f(&r)
		return r
	}
	cases := []struct {
		name   string
		r      store.ClaimedEnrollment
		steps  int
		held   bool
		kind   string
		status enrollment.Status
	}{
		{"due step is sent", claimed(1, 7, 2), 3, false, "", ""},
		{"last step is sent", claimed(1, 7, 3), 3, false, "", ""},
		{"left sending by a crash", with(func(r *store.ClaimedEnrollment) { r.StepSend = "sending" }), 3, true, OutcomeUnknown, enrollment.DeliveryUnknown},
		{"bounced address", with(func(r *store.ClaimedEnrollment) { r.Suppressed = "bounced" }), 3, true, OutcomeSuppressed, "bounced"},
		{"unsubscribed address", with(func(r *store.ClaimedEnrollment) { r.Suppressed = "unsubscribed" }), 3, true, OutcomeSuppressed, "unsubscribed"},
		{"other suppression fails", with(func(r *store.ClaimedEnrollment) { r.Suppressed = "complaint" }), 3, true, OutcomeSuppressed, "failed"},
		{"steps removed by a re-import", claimed(1, 7, 3), 2, true, OutcomeCompleted, "completed"},
		{"crash wins over suppression", with(func(r *store.ClaimedEnrollment) { r.StepSend = "sending"; r.Suppressed = "bounced" }), 3, true, OutcomeUnknown, enrollment.DeliveryUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, held := presendOutcome(tc.r, &Campaign{Steps: make([]Step, tc.steps)}, decideNow)
			if held != tc.held {
				t.Fatalf("held = %v, want %v", held, tc.held)
			}
			if !held {
				return
			}
			u := onlyUpdate(t, o)
			if o.kind != tc.kind || u.Status != tc.status || o.n != 1 {
				t.Errorf("got kind %q status %q n %d, want %q %q 1", o.kind, u.Status, o.n, tc.kind, tc.status)
			}
			if !u.NextSendAt.Equal(decideNow) || u.CurrentStep != tc.r.Step {
				t.Errorf("update %+v: want step %d settled at now", u, tc.r.Step)
			}
			if tc.kind == OutcomeUnknown && (len(o.set.Sends) != 1 || o.set.Sends[0].Status != enrollment.SendDeliveryUnknown) {
				t.Errorf("a step left sending must mark its send delivery_unknown, got %+v", o.set.Sends)
			}
		})
	}
}

func TestPlanBatch(t *testing.T) {
	t.Parallel()
	crashed := claimed(2, 3, 1)
	crashed.StepSend = "sending"
	rows := []store.ClaimedEnrollment{claimed(1, 7, 1), crashed, claimed(3, 3, 2), claimed(4, 7, 2), claimed(5, 5, 4), claimed(6, 3, 1)}
	p := planBatch(rows, func(int64) *Campaign { return &Campaign{Steps: make([]Step, 3)} }, decideNow)
	if len(p.settled) != 2 || p.settled[0].kind != OutcomeUnknown || p.settled[1].kind != OutcomeCompleted {
		t.Fatalf("settled %+v, want the crashed row then the completed one", p.settled)
	}
	if want := []int64{7, 3}; len(p.order) != 2 || p.order[0] != want[0] || p.order[1] != want[1] {
		t.Fatalf("order %v, want %v (mailbox 5 has only a settled row)", p.order, want)
	}
	ids := func(q []store.ClaimedEnrollment) (out []int64) {
		for _, r := range q {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(p.queues[7]); len(got) != 2 || got[0] != 1 || got[1] != 4 {
		t.Errorf("mailbox 7 queue %v, want [1 4]", got)
	}
	if got := ids(p.queues[3]); len(got) != 2 || got[0] != 3 || got[1] != 6 {
		t.Errorf("mailbox 3 queue %v, want [3 6] in claim order", got)
	}
}

func TestTurnOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		mbs      *mailboxState
		stopping bool
		want     mailboxTurn
	}{
		{"healthy", &mailboxState{id: 1}, false, turnSend},
		{"gone", nil, false, turnUnusable},
		{"invalid", &mailboxState{id: 1, err: errors.New("bad url")}, false, turnUnusable},
		{"invalid while stopping is still unusable", &mailboxState{id: 1, err: errors.New("bad url")}, true, turnUnusable},
		{"paused earlier", &mailboxState{id: 1, paused: true}, false, turnPaused},
		{"paused earlier while stopping", &mailboxState{id: 1, paused: true}, true, turnPaused},
		{"stopping", &mailboxState{id: 1}, true, turnRelease},
	}
	for _, tc := range cases {
		if got := turnOf(tc.mbs, tc.stopping); got != tc.want {
			t.Errorf("%s: turn %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNextMove(t *testing.T) {
	t.Parallel()
	cases := []struct {
		recordFailed, cancelled, outOfTime, unrecordable bool
		want                                             queueMove
	}{
		{false, false, false, false, moveSend},
		{true, false, false, false, moveAbort},
		{true, false, true, true, moveAbort},
		// A record cut short by the signal is not the database's failure.
		{true, true, false, false, moveRelease},
		{false, true, false, false, moveRelease},
		{false, false, true, false, moveRelease},
		{false, false, true, true, moveRelease},
		{false, false, false, true, moveReleaseAbort},
	}
	for _, tc := range cases {
		if got := nextMove(tc.recordFailed, tc.cancelled, tc.outOfTime, tc.unrecordable); got != tc.want {
			t.Errorf("nextMove(record failed %v, cancelled %v, out of time %v, unrecordable %v) = %d, want %d",
				tc.recordFailed, tc.cancelled, tc.outOfTime, tc.unrecordable, got, tc.want)
		}
	}
}

func TestAfterFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		de   DeliveryError
		want failureMove
	}{
		{DeliveryError{Kind: DeliveryMailboxQuota, Code: 550}, failPause},
		{DeliveryError{Kind: DeliveryMailboxThrottled, Code: 421}, failPause},
		{DeliveryError{Kind: DeliveryMailboxAuthFailed, Code: 535}, failPause},
		{DeliveryError{Kind: DeliveryMailboxRefused, Code: 553}, failPause},
		{DeliveryError{Kind: DeliveryTransient, Code: 0}, failBackOff},
		{DeliveryError{Kind: DeliveryTransient, Code: 421}, failBackOff},
		{DeliveryError{Kind: DeliveryTransient, Code: 451}, failLead},
		{DeliveryError{Kind: DeliveryBounced, Code: 550}, failLead},
		{DeliveryError{Kind: DeliveryRejected, Code: 554}, failLead},
		{DeliveryError{Kind: DeliveryUnknown, Code: 0}, failBackOff},
		{DeliveryError{Kind: DeliveryCancelled, Code: 0, TickCut: true}, failRelease},
		// Issue 37: the tick's own cut after the dot backs nothing off.
		{DeliveryError{Kind: DeliveryUnknown, Code: 0, TickCut: true}, failCutAfterDot},
	}
	for _, tc := range cases {
		if got := afterFailure(&tc.de); got != tc.want {
			t.Errorf("%s %d: move %d, want %d", tc.de.Kind, tc.de.Code, got, tc.want)
		}
	}
}

func TestPreparedOutcome(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    prepared
		held bool
		kind string
	}{
		{"recorded is sent", prepared{r: claimed(1, 7, 1), recorded: true}, false, ""},
		{"compose failed", prepared{r: claimed(1, 7, 1), composeErr: errors.New("template: no field")}, true, OutcomeFailed},
		{"duplicate address", prepared{r: claimed(1, 7, 1), duplicate: 42}, true, OutcomeDuplicate},
		{"step already has a send", prepared{r: claimed(1, 7, 1)}, true, OutcomeUnknown},
	}
	for _, tc := range cases {
		o, held := preparedOutcome(&tc.p, decideNow)
		if held != tc.held || o.kind != tc.kind {
			t.Errorf("%s: held %v kind %q, want %v %q", tc.name, held, o.kind, tc.held, tc.kind)
		}
	}
	o, _ := preparedOutcome(&prepared{r: claimed(1, 7, 1), duplicate: 42}, decideNow)
	if u := onlyUpdate(t, o); u.Status != "failed" || !strings.Contains(u.LastError, "enrollment 42") {
		t.Errorf("duplicate: update %+v, want failed naming enrollment 42", u)
	}
	o, _ = preparedOutcome(&prepared{r: claimed(1, 7, 1), duplicate: -1}, decideNow)
	if u := onlyUpdate(t, o); u.Status != "failed" || strings.Contains(u.LastError, "-1") || !strings.Contains(u.LastError, "at the same time") {
		t.Errorf("duplicate claimed by a concurrent tick: update %+v, want failed naming the concurrent tick, no -1", u)
	}
}

func TestSentOutcome(t *testing.T) {
	t.Parallel()
	business, err := NewWindow("UTC", []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "17:00")
	if err != nil {
		t.Fatal(err)
	}
	steps := []Step{{}, {Delay: 2 * time.Hour}, {Delay: 72 * time.Hour}}
	cases := []struct {
		name   string
		window *Window
		step   int
		kind   string
		status enrollment.Status
		next   int
		due    time.Time
	}{
		{"first step schedules the second", nil, 1, OutcomeSent, "active", 2, decideNow.Add(2 * time.Hour)},
		{"follow-up falls outside the window", business, 2, OutcomeSent, "active", 3, time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC)},
		{"last step completes", nil, 3, OutcomeCompleted, "completed", 3, decideNow},
	}
	for _, tc := range cases {
		c := &Campaign{Steps: steps, Window: tc.window}
		o := sentOutcome(c, claimed(1, 7, tc.step), 7, "sdr@acme.test", decideNow)
		u := onlyUpdate(t, o)
		if o.kind != tc.kind || u.Status != tc.status || u.CurrentStep != tc.next || !u.NextSendAt.Equal(tc.due) {
			t.Errorf("%s: %s %s step %d due %s, want %s %s step %d due %s", tc.name, o.kind, u.Status, u.CurrentStep, u.NextSendAt, tc.kind, tc.status, tc.next, tc.due)
		}
		if o.mailbox != "sdr@acme.test" || u.MailboxID != 7 || len(o.set.Sends) != 1 || o.set.Sends[0].Status != enrollment.SendSent {
			t.Errorf("%s: a sent step is counted for its mailbox and recorded sent, got %+v", tc.name, o)
		}
	}
}

func TestFailedOutcome(t *testing.T) {
	t.Parallel()
	lastTry := claimed(1, 7, 1)
	lastTry.Attempts = TransientAttemptsMaxDefault - 1
	cases := []struct {
		name        string
		r           store.ClaimedEnrollment
		kind        DeliveryKind
		outcome     string
		status      enrollment.Status
		send        enrollment.SendStatus
		attempts    int
		due         time.Time
		suppression bool
	}{
		{"transient backs off", claimed(1, 7, 1), DeliveryTransient, OutcomeTransient, "active", enrollment.SendFailed, 3, decideNow.Add(TransientBackoff(3)), false},
		{"transient gives up", lastTry, DeliveryTransient, OutcomeFailed, "failed", enrollment.SendFailed, TransientAttemptsMaxDefault, decideNow.Add(TransientBackoff(TransientAttemptsMaxDefault)), false},
		{"bounce suppresses", claimed(1, 7, 1), DeliveryBounced, OutcomeBounced, "bounced", enrollment.SendFailed, 2, decideNow, true},
		{"rejected fails", claimed(1, 7, 1), DeliveryRejected, OutcomeRejected, "failed", enrollment.SendFailed, 2, decideNow, false},
		{"no answer to the dot", claimed(1, 7, 1), DeliveryUnknown, OutcomeDeliveryUnknown, enrollment.DeliveryUnknown, enrollment.SendDeliveryUnknown, 2, decideNow, false},
	}
	for _, tc := range cases {
		o := failedOutcome(tc.r, &DeliveryError{Kind: tc.kind, Err: errors.New("550 no")}, decideNow)
		u := onlyUpdate(t, o)
		if o.kind != tc.outcome || u.Status != tc.status || u.Attempts != tc.attempts || !u.NextSendAt.Equal(tc.due) {
			t.Errorf("%s: %s %s attempts %d due %s, want %s %s %d %s", tc.name, o.kind, u.Status, u.Attempts, u.NextSendAt, tc.outcome, tc.status, tc.attempts, tc.due)
		}
		if len(o.set.Sends) != 1 || o.set.Sends[0].Status != tc.send {
			t.Errorf("%s: sends %+v, want one %s", tc.name, o.set.Sends, tc.send)
		}
		if got := len(o.set.Suppressions) == 1; got != tc.suppression {
			t.Errorf("%s: suppressions %+v, want suppression %v", tc.name, o.set.Suppressions, tc.suppression)
		}
	}
}

func TestPlanPause(t *testing.T) {
	t.Parallel()
	rows := []store.ClaimedEnrollment{claimed(1, 7, 2), claimed(2, 7, 1), claimed(3, 7, 3)}
	unsentNext := []store.SendResult{{EnrollmentID: 2, Step: 1, Status: enrollment.SendFailed}}
	cases := []struct {
		kind  DeliveryKind
		until time.Duration
	}{
		{DeliveryMailboxQuota, MailboxQuotaPauseDefault},
		{DeliveryMailboxThrottled, MailboxThrottlePauseDefault},
		{DeliveryMailboxRefused, MailboxRefusedPauseDefault},
		// Issue 27: a failed login pauses too; it disabled the mailbox.
		{DeliveryMailboxAuthFailed, MailboxRefusedPauseDefault},
	}
	for _, tc := range cases {
		p := planPause(&DeliveryError{Kind: tc.kind, Err: errors.New("limit")}, rows, unsentNext, decideNow)
		if !strings.HasPrefix(p.reason, string(tc.kind)+": ") {
			t.Errorf("%s: reason %q", tc.kind, p.reason)
		}
		if len(p.set.Sends) != 2 || p.set.Sends[0].EnrollmentID != 1 || p.set.Sends[1].EnrollmentID != 2 {
			t.Errorf("%s: sends %+v, want the failed row then the unsent one", tc.kind, p.set.Sends)
		}
		// Step-1 rows are due now (rebinding moves them); follow-ups wait
		// for the pause.
		followUpDue := decideNow.Add(tc.until)
		if !p.until.Equal(followUpDue) || p.episode != strconv.FormatInt(followUpDue.Unix(), 10) {
			t.Errorf("%s: until %v episode %s, want %s", tc.kind, p.until, p.episode, followUpDue)
		}
		want := []time.Time{followUpDue, decideNow, followUpDue}
		for i, u := range p.set.Enrollments {
			if !u.NextSendAt.Equal(want[i]) || u.Status != "active" || u.Attempts != rows[i].Attempts {
				t.Errorf("%s: row %d released %+v, want active due %s with its attempts", tc.kind, i, u, want[i])
			}
		}
	}
}

func TestReleaseOutcome(t *testing.T) {
	t.Parallel()
	rows := []store.ClaimedEnrollment{claimed(1, 7, 2), claimed(2, 7, 1)}
	o := releaseOutcome(rows, dueAsBefore, "why", nil)
	if o.kind != OutcomeReleased || o.n != 2 || len(o.set.Enrollments) != 2 {
		t.Fatalf("release %+v", o)
	}
	for i, u := range o.set.Enrollments {
		if !u.NextSendAt.Equal(rows[i].DueAt) || u.Attempts != rows[i].Attempts || u.CurrentStep != rows[i].Step || u.LastError != "why" {
			t.Errorf("row %d released %+v: want it untouched, due as before", i, u)
		}
	}
}
