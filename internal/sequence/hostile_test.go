package sequence

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// The email tick against SMTP servers that misbehave: each test points one
// mailbox of the fixture at a hostile server (a go-smtp backend where it
// can express the behaviour, smtptest.Raw where it cannot) and checks the
// tick's guarantees: nothing is delivered twice, quotas pause the mailbox,
// a bad server holds only its own mailbox, every tick ends on time.

// pointMailbox moves a fixture mailbox to another server.
func (f *fixture) pointMailbox(address, url string) {
	f.t.Helper()
	if f.exec(`UPDATE mailboxes SET smtp_url = $1 WHERE address = $2`, url, address) != 1 {
		f.t.Fatalf("no mailbox %s", address)
	}
}

// deliveredOnce fails when any recipient got the same step twice, counting
// every message whose final dot reached a server (answered or not).
func deliveredOnce(t *testing.T, msgs ...[]smtptest.Message) {
	t.Helper()
	seen := map[string]int{}
	for _, ms := range msgs {
		for _, m := range ms {
			key := strings.Join(m.To, ",") + " " + m.Header.Get("Subject")
			if seen[key]++; seen[key] == 2 {
				t.Errorf("%s was delivered twice", key)
			}
		}
	}
}

func TestTickDropAfterDotIsDeliveryUnknownNeverResent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{AfterDot: smtptest.AfterDotDrop})
	f.pointMailbox("sdr01@acme.test", raw.URL())

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeDeliveryUnknown] != 1 || rep.Outcomes[OutcomeReleased] != 2 {
		t.Fatalf("tick = %+v, want 1 delivery_unknown and the other 2 released (connection lost)", rep)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'delivery_unknown' AND last_error LIKE '%delivery unknown%'`); n != 1 {
		t.Errorf("%d delivery_unknown enrollments, want 1", n)
	}
	if n := f.count(`SELECT count(*) FROM sends WHERE status = 'delivery_unknown'`); n != 1 {
		t.Errorf("%d delivery_unknown sends, want 1", n)
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'delivery_unknown'`); n != 1 {
		t.Errorf("%d delivery_unknown events, want 1", n)
	}
	// Later ticks (the server keeps dropping) never resend a step whose
	// dot went out.
	for range 3 {
		f.due()
		f.tick(TickOptions{})
	}
	deliveredOnce(t, raw.Delivered())
	if got := len(raw.Received()); got != 3 {
		t.Errorf("server received %d messages, want 3 (one per lead)", got)
	}
}

func TestTickNoReplyToDataIsDeliveryUnknown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1})
	f.mailer = NewMailer(MailerOptions{DataTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = f.mailer.Close() })
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageData, To: "lead1@example.test", AfterDot: true, Hang: true})

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeDeliveryUnknown] != 1 {
		t.Fatalf("tick = %+v, want 1 delivery_unknown", rep)
	}
	f.due()
	f.tick(TickOptions{})
	if got := f.srv.Received(); got != 2 {
		t.Errorf("server received %d messages, want 2: lead1's step must not be resent", got)
	}
	deliveredOnce(t, f.srv.Messages())
	if n := f.count(`SELECT count(*) FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test' AND e.status = 'delivery_unknown'`); n != 1 {
		t.Error("lead1's enrollment is not delivery_unknown")
	}
}

// A sending quota from a server without ENHANCEDSTATUSCODES, after the
// final dot: the mailbox is paused, its leads are not failed.
func TestTickQuotaWithoutEnhancedCodesPausesMailbox(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 20, mailboxes: 2})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Replies: map[smtptest.Stage]string{
		smtptest.StageData: "550 5.4.5 Daily user sending quota exceeded.",
	}})
	f.pointMailbox("sdr01@acme.test", raw.URL())
	onLimited := f.count(`SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = 'sdr01@acme.test'`)

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Outcomes[OutcomeRejected] != 0 {
		t.Fatalf("tick = %+v, want the mailbox paused and nothing rejected", rep)
	}
	if got := len(raw.Received()); got != 1 {
		t.Errorf("the limited mailbox got %d messages through, want 1 attempt", got)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'failed'`); n != 0 {
		t.Errorf("%d enrollments failed, want none", n)
	}
	if n := f.count(`SELECT count(*) FROM mailboxes WHERE address = 'sdr01@acme.test' AND paused_until > now() + interval '23 hours'`); n != 1 {
		t.Error("the limited mailbox is not paused for a day")
	}
	// Its step-1 leads went out from the healthy mailbox.
	if rep.Sent != 20 || onLimited == 0 {
		t.Errorf("sent %d, want all 20 (limited mailbox had %d)", rep.Sent, onLimited)
	}
}

// One mailbox per misbehaving server: the tick classifies each, never
// delivers twice, ends on time, and the healthy mailbox sends everything.
func TestTickMisbehavingServers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		raw  *smtptest.RawOptions
		rule *smtptest.Rule
		// want is the outcome of the bad mailbox's first message, or of
		// every one of its messages with each.
		want string
		each bool
		// tickCut keeps the 15 s greeting timeout, so the tick's deadline
		// (3 s plus the grace) cuts the session first; otherwise the
		// greeting gets 1 s and the server's fault shows in the tick's time.
		tickCut bool
	}{
		{name: "no greeting", raw: &smtptest.RawOptions{NoGreeting: true}, want: OutcomeTransient},
		{name: "421 at greeting", raw: &smtptest.RawOptions{Greeting: "421 4.3.2 Service not available, closing transmission channel"}, want: OutcomeTransient},
		{name: "byte-at-a-time replies", raw: &smtptest.RawOptions{ByteDelay: 4 * time.Second}, want: OutcomeTransient},
		{name: "451 after the dot", raw: &smtptest.RawOptions{Replies: map[smtptest.Stage]string{smtptest.StageData: "451 4.3.0 Temporary local problem, try again"}}, want: OutcomeTransient, each: true},
		{name: "552 after the dot", raw: &smtptest.RawOptions{Replies: map[smtptest.Stage]string{smtptest.StageData: "552 5.3.4 Message size exceeds fixed maximum message size"}}, want: OutcomeRejected, each: true},
		{name: "535 at AUTH", raw: &smtptest.RawOptions{Replies: map[smtptest.Stage]string{smtptest.StageAuth: "535 5.7.8 Username and Password not accepted"}}, want: OutcomeMailboxPaused},
		{name: "550 5.4.5 with ENHANCEDSTATUSCODES", rule: &smtptest.Rule{Stage: smtptest.StageData, From: "sdr01@acme.test", Code: 550, Enhanced: "5.4.5", Message: "Daily user sending limit exceeded"}, want: OutcomeMailboxPaused},
		{name: "550 5.4.5 without ENHANCEDSTATUSCODES", raw: &smtptest.RawOptions{Replies: map[smtptest.Stage]string{smtptest.StageMail: "550 5.4.5 Daily user sending limit exceeded."}}, want: OutcomeMailboxPaused},
		{name: "drop after the dot", rule: &smtptest.Rule{Stage: smtptest.StageData, From: "sdr01@acme.test", AfterDot: true, Close: true}, want: OutcomeDeliveryUnknown},
		{name: "no reply to the dot", rule: &smtptest.Rule{Stage: smtptest.StageData, From: "sdr01@acme.test", AfterDot: true, Hang: true}, want: OutcomeDeliveryUnknown},
		// Issue 29: cut by the tick, not failed by the server: every row of
		// the mailbox goes back due as before.
		{name: "no greeting by the tick's deadline", raw: &smtptest.RawOptions{NoGreeting: true}, want: OutcomeReleased, each: true, tickCut: true},
		{name: "byte-at-a-time replies by the tick's deadline", raw: &smtptest.RawOptions{ByteDelay: 4 * time.Second}, want: OutcomeReleased, each: true, tickCut: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{leads: 12, mailboxes: 2, steps: oneStep})
			var raw *smtptest.Raw
			if tc.raw != nil {
				raw = smtptest.NewRaw(t, *tc.raw)
				f.pointMailbox("sdr01@acme.test", strings.Replace(raw.URL(), "smtp://", "smtp://sdr01@", 1))
				f.exec(`UPDATE mailboxes SET password_env = 'RINDA_TEST_PW' WHERE address = 'sdr01@acme.test'`)
			} else {
				f.srv.Script(*tc.rule)
			}
			greeting := time.Second
			if tc.tickCut {
				greeting = 0
			}
			f.mailer = NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "pw", true }, GreetingTimeout: greeting})
			onBad := f.count(`SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address = 'sdr01@acme.test'`)
			onGood := 12 - onBad

			maxDuration := 3 * time.Second
			start := time.Now()
			rep := f.tick(TickOptions{MaxDuration: maxDuration})
			closeErr := f.mailer.Close()
			// What must never happen, whatever the machine's load: the
			// tick waiting for the server (a greeting timeout of 15 s, a
			// minute for the dot's reply, or forever).
			if took := time.Since(start); took >= MailerGreetingTimeoutDefault {
				t.Errorf("tick and mailer close took %s (--max-duration %s): the tick waited for the server", took, maxDuration)
			}
			_ = closeErr
			if want := map[bool]int{false: 1, true: onBad}[tc.each]; rep.Outcomes[tc.want] != want {
				t.Errorf("outcomes = %v, want %d %s", rep.Outcomes, want, tc.want)
			}
			healthySent := func(rep *TickReport) int {
				if tc.want == OutcomeMailboxPaused {
					return rep.Sent // the paused mailbox's step-1 leads move over
				}
				return rep.ByMailbox["sdr02@acme.test"]
			}
			if tc.want == OutcomeMailboxPaused {
				onGood = 12
			}
			good := healthySent(rep)
			// On CI's loaded cores a 3 s tick can end with healthy rows
			// still claimed: only the deadline may leave them, released.
			if good != onGood && rep.Outcomes[OutcomeReleased] == 0 {
				t.Errorf("healthy mailbox sent %d, want all its %d (report %+v)", good, onGood, rep)
			}
			// Nothing delivered twice, even after more ticks, each of which
			// sends healthy rows until all are sent: on a loaded machine a
			// tick sends fewer, never none.
			f.mailer = NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "pw", true }, DataTimeout: 500 * time.Millisecond})
			defer f.mailer.Close()
			for range onGood {
				f.due()
				more := f.tick(TickOptions{MaxDuration: maxDuration})
				if good += healthySent(more); good >= onGood || healthySent(more) == 0 {
					break
				}
			}
			if good != onGood {
				t.Errorf("healthy mailbox sent %d, want all its %d: a later tick sent none of them (first tick %+v)", good, onGood, rep)
			}
			var rawMsgs []smtptest.Message
			if raw != nil {
				rawMsgs = raw.Delivered()
			}
			deliveredOnce(t, f.srv.Messages(), rawMsgs)
			if n := f.count(`SELECT count(*) FROM enrollments WHERE locked_by IS NOT NULL`); n != 0 {
				t.Errorf("%d enrollments left leased", n)
			}
		})
	}
}

const oneStep = "steps:\n  - subject: \"Hi {{.FirstName}}\"\n    body: \"Hello {{.FirstName}}\"\n"

// A mailbox whose server never greets must not slow the others: the
// healthy mailboxes send all their rows while it hangs, and the tick never
// waits for it. Bounded by what must never happen (the hung server holding
// the claim loop or every slot: the healthy ones would stop at their share
// of the first batch; the tick waiting out the greeting timeout), not by a
// throughput ratio or a margin over --max-duration, which move with load.
// The tick is stopped (SIGTERM) once the healthy rows are recorded sent, so
// their count does not depend on how many a loaded machine sends before a
// deadline (a 10 s one ended under CI's load with about 100 sends per
// mailbox to go); the deadline's cut of a hung greeting is
// TestTickMisbehavingServers' "no greeting by the tick's deadline".
func TestTickHungMailboxHoldsOnlyItsOwnSlot(t *testing.T) {
	t.Parallel()
	const leads, batch = 300, 50
	f := newFixture(t, fixtureOptions{leads: leads, mailboxes: 3, steps: oneStep, countOnly: true})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{NoGreeting: true})
	f.pointMailbox("sdr01@acme.test", raw.URL())
	healthy := f.count(`SELECT count(*) FROM enrollments e JOIN mailboxes m ON m.id = e.mailbox_id WHERE m.address <> 'sdr01@acme.test'`)
	// The greeting may take a minute: only the signal cuts it.
	f.mailer = NewMailer(MailerOptions{Timeout: 10 * time.Second, GreetingTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	signalled := make(chan time.Time, 1)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ctx.Err() == nil {
			var sent int
			if err := f.pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE status = 'sent'`).Scan(&sent); err == nil && sent >= healthy {
				signalled <- time.Now()
				cancel() // SIGTERM
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	rep, err := RunTick(ctx, f.tickPool, TickOptions{Mailer: f.mailer, Batch: batch, MaxDuration: 10 * time.Minute})
	_ = f.mailer.Close()
	cancel()
	<-watched
	if err != nil {
		t.Fatalf("tick: %v", err)
	}
	var at time.Time
	select {
	case at = <-signalled:
	default:
		t.Fatalf("the tick ended before the healthy mailboxes had sent their %d rows: %+v", healthy, rep)
	}
	took := time.Since(at)
	sent := rep.ByMailbox["sdr02@acme.test"] + rep.ByMailbox["sdr03@acme.test"]
	t.Logf("healthy mailboxes sent %d of %d beside a hung one; the tick ended %s after the signal", sent, healthy, took)
	if sent != healthy {
		t.Errorf("healthy mailboxes sent %d of their %d beside a hung one", sent, healthy)
	}
	if took >= time.Minute {
		t.Errorf("the tick ended %s after the signal: it waited for the hung server's greeting", took)
	}
}

func TestMailerPhaseDeadlinesHoldAgainstTricklingServer(t *testing.T) {
	t.Parallel()
	raw := smtptest.NewRaw(t, smtptest.RawOptions{ByteDelay: 400 * time.Millisecond})
	c := testCampaign(t, "")
	ep, err := ParseSMTPURL(raw.URL())
	if err != nil {
		t.Fatal(err)
	}
	mb := Mailbox{Address: "sdr01@acme.test", SMTP: ep}
	// Every single read would finish within the timeout; the greeting as a
	// whole (≈ 22 bytes) cannot.
	m := NewMailer(MailerOptions{Timeout: time.Second, GreetingTimeout: time.Second})
	defer m.Close()
	msg, err := c.Compose(0, Lead{FirstName: "L", Email: "l@x.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = m.Send(context.Background(), mb, msg)
	de := ClassifyDelivery(err)
	if de == nil || de.Kind != DeliveryTransient || de.Phase != PhaseConnect {
		t.Fatalf("err = %v, want a transient connect failure", err)
	}
	// Not a margin over 1 s (load moves it): the whole greeting, which
	// the deadline must cut, takes about 9 s.
	if took := time.Since(start); took >= 8*time.Second {
		t.Errorf("Send took %s against a 1s greeting deadline: it read the whole greeting", took)
	}
	// A context deadline caps every phase, whatever the timeouts.
	m2 := NewMailer(MailerOptions{})
	defer m2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start = time.Now()
	if err := m2.Send(ctx, mb, msg); err == nil {
		t.Fatal("send through a trickling server succeeded")
	}
	if took := time.Since(start); took >= 8*time.Second {
		t.Errorf("Send took %s past a 1s context deadline: it read the whole greeting", took)
	}
}

// Issue 29: a session the tick's own deadline cuts before the final dot is
// neither the mailbox's failure nor the lead's: no backoff, no pause, no
// attempt; the mailbox's rows go back due as before and the cut step's
// 'sending' row is settled as not sent. A server that really times out
// (its phase timeout reached while the tick still had time) is still a
// transient failure that backs the mailbox off. Before the fix the cut
// counted as a transient failure: an attempt, and a 5-minute backoff for
// the whole mailbox.
func TestTickDeadlineCutIsNoMailboxFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		timeout     time.Duration // each SMTP command's; 0 is the 15 s default
		maxDuration time.Duration
		cut         bool
	}{
		{"cut by the tick's deadline", 0, time.Second, true},
		{"server timeout with the tick's time left", 300 * time.Millisecond, 5 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, steps: oneStep})
			f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Hang: true})
			f.mailer = NewMailer(MailerOptions{Timeout: tc.timeout})
			rep := f.tick(TickOptions{MaxDuration: tc.maxDuration})
			// On a loaded machine the deadline can come before the session
			// starts: nothing went out and the rows went back as they were,
			// so the tick runs again with more time until one session hung.
			for d := 2 * tc.maxDuration; f.srv.Attempts("sdr01@acme.test") == 0 && d <= 16*time.Second; d *= 2 {
				rep = f.tick(TickOptions{MaxDuration: d})
			}
			if f.srv.Attempts("sdr01@acme.test") != 1 {
				t.Fatalf("the server saw %d MAIL FROM, want the one session that hung", f.srv.Attempts("sdr01@acme.test"))
			}
			backedOff := f.count(`SELECT count(*) FROM enrollments WHERE next_send_at > now() + interval '1 minute'`)
			charged := f.count(`SELECT count(*) FROM enrollments WHERE attempts > 0 OR last_error IS NOT NULL`)
			if n := f.count(`SELECT count(*) FROM sends WHERE status = 'sending'`); n != 0 {
				t.Errorf("%d sends left 'sending'", n)
			}
			if n := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until IS NOT NULL OR status <> 'active'`); n != 0 {
				t.Errorf("%d mailboxes paused or disabled, want none", n)
			}
			if tc.cut {
				if rep.Outcomes[OutcomeReleased] != 3 || rep.Outcomes[OutcomeTransient] != 0 || backedOff != 0 || charged != 0 {
					t.Errorf("tick %+v: %d enrollments backed off, %d charged; want all 3 released due as before, uncharged", rep.Outcomes, backedOff, charged)
				}
				return
			}
			if rep.Outcomes[OutcomeTransient] != 1 || backedOff != 3 || charged == 0 {
				t.Errorf("tick %+v: %d enrollments backed off, %d charged; want the server's timeout transient and the mailbox backed off", rep.Outcomes, backedOff, charged)
			}
		})
	}
}
