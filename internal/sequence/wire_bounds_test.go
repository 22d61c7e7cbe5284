package sequence

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Issue 25, finding 4: what a server sends never sets a tick's memory or
// time. Each test bounds what must never happen: the client reading a
// flood to its end (the server's own count of what it managed to send,
// taken after it stopped), an unbounded stored text, a signalled tick
// running on to its deadline.

// floodLimit is far above what the kernel's socket buffers hold once the
// client stops reading, far below the floods (100 MB and more).
const floodLimit = 32 << 20

func rawMessage(t *testing.T, raw *smtptest.Raw) (Mailbox, *Message) {
	t.Helper()
	mb := rawMailbox(t, raw)
	msg, err := testCampaign(t, "").Compose(0, Lead{FirstName: "L", Email: "l@x.test"}, mb, NewMessageID(mb.Address), nil)
	if err != nil {
		t.Fatal(err)
	}
	return mb, msg
}

// A 100 MB multi-line 550 after the final dot: the reply is cut at
// ReplyMaxBytes, classified on what was read (5.1.1: a bounce), its text
// kept to redact.StoredMax, and the connection dropped unread.
func TestMailerCutsAHugeReplyAndClassifiesItsStart(t *testing.T) {
	t.Parallel()
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Flood: &smtptest.Flood{
		Stage: smtptest.StageData, Bytes: 100 << 20, Last: "550 5.1.1 end",
		Line: "550-5.1.1 The email account that you tried to reach does not exist. " + strings.Repeat("x", 40),
	}})
	mb, msg := rawMessage(t, raw)
	m := NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "pw", true }})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := m.Send(ctx, mb, msg)
	de := ClassifyDelivery(err)
	if de == nil || de.Kind != DeliveryBounced || de.Code != 550 || !de.Cut || !de.ConnLost() {
		t.Fatalf("err = %+v, want a bounce (550 5.1.1) read from the cut reply, the connection lost", de)
	}
	if n := len(de.Error()); n > redact.StoredMax+200 {
		t.Errorf("the error is %d bytes, want the reply's text kept to %d", n, redact.StoredMax)
	}
	raw.Close()
	if w := raw.Written(); w > floodLimit {
		t.Errorf("the server got %d bytes out: the client read the flood", w)
	}
}

// Endless "250-" EHLO lines: the dial fails (transient), bounded.
func TestMailerCutsAnEndlessEHLO(t *testing.T) {
	t.Parallel()
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Flood: &smtptest.Flood{
		Stage: smtptest.StageEHLO, Line: "250-X-CAPABILITY-" + strings.Repeat("Y", 60), Bytes: 1 << 30, Last: "250 OK",
	}})
	mb, msg := rawMessage(t, raw)
	m := NewMailer(MailerOptions{LookupEnv: func(string) (string, bool) { return "pw", true }})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	de := ClassifyDelivery(m.Send(ctx, mb, msg))
	if de == nil || de.Kind != DeliveryTransient || de.Phase != PhaseConnect {
		t.Fatalf("err = %+v, want a transient connect failure", de)
	}
	raw.Close()
	if w := raw.Written(); w > floodLimit {
		t.Errorf("the server got %d bytes of EHLO out: the client read the flood", w)
	}
}

// The same flood at the tick: what is stored and logged is bounded, and
// the lead is classified on the cut reply.
func TestTickStoresABoundedTextOfAHugeReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1, mailboxes: 1, steps: oneStep})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Flood: &smtptest.Flood{
		Stage: smtptest.StageData, Bytes: 100 << 20, Last: "550 5.7.1 end",
		Line: "550-5.7.1 Message rejected as spam by content filtering " + strings.Repeat("z", 60),
	}})
	f.pointMailbox("sdr01@acme.test", raw.URL())
	var logs strings.Builder
	rep := f.tick(TickOptions{MaxDuration: 3 * time.Second, Logger: jsonLogger(&logs)})
	if rep.Outcomes[OutcomeRejected] != 1 {
		t.Fatalf("tick = %+v, want the lead rejected (550 5.7.1)", rep)
	}
	if n := f.count(`SELECT max(length(error)) FROM sends`); n > redact.StoredMax || n == 0 {
		t.Errorf("sends.error is %d long, want 1..%d", n, redact.StoredMax)
	}
	if n := f.count(`SELECT max(octet_length(last_error)) FROM enrollments`); n > redact.StoredMax || n == 0 {
		t.Errorf("enrollments.last_error is %d bytes, want 1..%d", n, redact.StoredMax)
	}
	if n := logs.Len(); n > 4*redact.StoredMax {
		t.Errorf("the tick logged %d bytes", n)
	}
	raw.Close()
	if w := raw.Written(); w > floodLimit {
		t.Errorf("the server got %d bytes out", w)
	}
}

// A reply that trickles without end holds a send until its phase's
// deadline; SIGTERM (the context cancelled) closes the connection a grace
// after the signal, not at a deadline half a minute away.
func TestTickSignalClosesATricklingReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1, mailboxes: 1, steps: oneStep})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{Flood: &smtptest.Flood{
		Stage: smtptest.StageData, Bytes: 100 << 20, Last: "550 5.7.1 end", Delay: 50 * time.Millisecond,
		Line: "550-5.7.1 still rejecting",
	}})
	f.pointMailbox("sdr01@acme.test", raw.URL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// SIGTERM once the message's dot is at the server (not at a fixed 1 s:
	// on a loaded machine the tick may not have reached the dot by then).
	go func() {
		for len(raw.Received()) == 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	const maxDuration = 30 * time.Second
	start := time.Now()
	rep, err := RunTick(ctx, f.tickPool, TickOptions{Mailer: f.mailer, MaxDuration: maxDuration})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// Never the deadline (30 s, then its grace): a margin over the 1 s
	// signal would move with the machine's load.
	if took >= maxDuration {
		t.Errorf("the signalled tick took %s: it waited for the server instead of closing at the signal's grace", took)
	}
	if rep.Outcomes[OutcomeDeliveryUnknown] != 1 {
		t.Errorf("outcomes %v, want the cut message delivery_unknown (its dot went out)", rep.Outcomes)
	}
}

func jsonLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }

// A signal during a greeting that trickles: the connection is closed a
// grace after the signal, and the session cut so is the tick's, not the
// mailbox's: the lead is released uncharged, not backed off.
func TestTickSignalCutBeforeTheDotIsNoFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1, mailboxes: 1, steps: oneStep})
	raw := smtptest.NewRaw(t, smtptest.RawOptions{ByteDelay: 2 * time.Second})
	f.pointMailbox("sdr01@acme.test", raw.URL())
	f.mailer = NewMailer(MailerOptions{GreetingTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// SIGTERM once the session has begun (not at a fixed 1 s: on a loaded
	// machine the tick may not have claimed the row by then, and a signal
	// before the claim releases nothing).
	go func() {
		for raw.Connections() == 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	const maxDuration = 30 * time.Second
	start := time.Now()
	rep, err := RunTick(ctx, f.tickPool, TickOptions{Mailer: f.mailer, MaxDuration: maxDuration})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= maxDuration {
		t.Errorf("the signalled tick took %s: it waited for the greeting", took)
	}
	if rep.Outcomes[OutcomeTransient] != 0 || rep.Outcomes[OutcomeReleased] != 1 {
		t.Errorf("outcomes %v, want the lead released, not a transient failure", rep.Outcomes)
	}
	if n := f.count(`SELECT count(*) FROM enrollments WHERE attempts > 0 OR next_send_at > now() + interval '1 minute'`); n != 0 {
		t.Errorf("%d enrollments charged or backed off by the tick's own cut", n)
	}
}
