package sequence

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// Issue 37, item 6: the tick's own cut is not the peer's fault.

// rowState is what a tick may change on an enrollment.
type rowState struct {
	status    string
	attempts  int
	nextSend  time.Time
	lastError string
}

func (f *fixture) rowStates() map[int64]rowState {
	f.t.Helper()
	rows, err := f.pool.Query(context.Background(), `SELECT id, status, attempts, next_send_at, coalesce(last_error, '') FROM enrollments`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]rowState{}
	for rows.Next() {
		var id int64
		var s rowState
		if err := rows.Scan(&id, &s.status, &s.attempts, &s.nextSend, &s.lastError); err != nil {
			f.t.Fatal(err)
		}
		out[id] = s
	}
	if rows.Err() != nil {
		f.t.Fatal(rows.Err())
	}
	return out
}

// A session waiting for the reply to its final dot, cut by the tick's
// deadline or by a signal (the server stalls with the whole message): the
// step is delivery_unknown, as any unanswered dot (never resent), but the
// mailbox's other rows were never tried and are left as they were: due as
// before, no attempt, no error text, no pause. Before the fix the cut read
// as the server dropping the connection: the other rows were pushed back
// 5 minutes with "mailbox connection failed: … use of closed network
// connection". Both run the shipped mailer timeouts (the reply to the dot
// may take 60 s, longer than the tick has); the signal case runs the
// shipped tick options too.
func TestTickCutAfterTheDotLeavesTheMailboxsOtherRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		opts   TickOptions
		signal bool
		cause  string
	}{
		// 15 s: ample time for the first dot to reach the server on a
		// loaded 2-core machine (CI's make test-stress); the shipped
		// mailer would wait 60 s for the reply, so the deadline still cuts.
		{name: "the tick's deadline", opts: TickOptions{MaxDuration: 15 * time.Second}, cause: "deadline"},
		{name: "a signal, shipped defaults", signal: true, cause: "signal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const leads = 4
			f := newFixture(t, fixtureOptions{leads: leads, mailboxes: 1, steps: oneStep})
			stall := smtptest.NewRaw(t, smtptest.RawOptions{AfterDot: smtptest.AfterDotHang})
			f.pointMailbox("sdr01@acme.test", stall.URL())
			f.mailer = NewMailer(MailerOptions{})
			before := f.rowStates()

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.signal {
				// SIGTERM once the server has the message.
				go func() {
					select {
					case <-stall.DotReceived():
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			opts := tc.opts
			opts.Mailer = f.mailer
			rep, err := RunTick(ctx, f.tickPool, opts)
			if err != nil {
				t.Fatalf("tick: %v", err)
			}
			if got := len(stall.Received()); got != 1 {
				t.Fatalf("the stalling server has %d messages, want the 1 whose reply never came (report %+v)", got, rep)
			}
			if rep.Outcomes[OutcomeDeliveryUnknown] != 1 || rep.Outcomes[OutcomeTransient] != 0 || rep.Outcomes[OutcomeMailboxPaused] != 0 {
				t.Errorf("outcomes %v, want 1 delivery_unknown, nothing transient or paused", rep.Outcomes)
			}
			after := f.rowStates()
			unknown := 0
			for id, was := range before {
				now := after[id]
				if now.status == "delivery_unknown" {
					unknown++
					// The cut is named, not a connection the server lost.
					if !strings.Contains(now.lastError, "delivery unknown") || !strings.Contains(now.lastError, tc.cause) || strings.Contains(now.lastError, "closed network connection") {
						t.Errorf("the unanswered step's last_error %q, want delivery unknown naming the tick's %s", now.lastError, tc.cause)
					}
					continue
				}
				if now != was {
					t.Errorf("enrollment %d: %+v after the cut, want it as it was: %+v", id, now, was)
				}
			}
			if unknown != 1 {
				t.Errorf("%d enrollments delivery_unknown, want 1", unknown)
			}
			if n := f.count(`SELECT count(*) FROM sends WHERE status = 'sending'`); n != 0 {
				t.Errorf("%d sends left 'sending'", n)
			}
			if n := f.count(`SELECT count(*) FROM sends WHERE status = 'delivery_unknown'`); n != 1 {
				t.Errorf("%d delivery_unknown sends, want 1", n)
			}
			if n := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until IS NOT NULL OR pause_reason IS NOT NULL OR status <> 'active'`); n != 0 {
				t.Errorf("%d mailboxes paused or disabled by the tick's own cut", n)
			}

			// The server answers again: the other rows go out, the
			// unanswered step never again.
			healthy := smtptest.NewRaw(t, smtptest.RawOptions{})
			f.pointMailbox("sdr01@acme.test", healthy.URL())
			f.mailer = NewMailer(MailerOptions{})
			if rep := f.tick(TickOptions{}); rep.Sent != leads-1 {
				t.Errorf("next tick sent %d, want the %d rows the cut left", rep.Sent, leads-1)
			}
			deliveredOnce(t, stall.Received(), healthy.Received())
			if got := len(stall.Received()) + len(healthy.Received()); got != leads {
				t.Errorf("the servers have %d messages, want %d: one per lead", got, leads)
			}
		})
	}
}

// A mailbox that requires TLS on a server whose EHLO offers no STARTTLS (a
// downgrade attacker stripped it, or the server lost its certificate):
// nothing goes out in clear, not even AUTH, and retrying cannot help until
// it is fixed. It pauses the mailbox as an untrusted certificate does, with
// a reason saying so, and charges no lead an attempt. Before the fix it was
// transient: one lead charged an attempt per tick, the rest backed off.
// With STARTTLS offered again, the same mailbox sends over TLS.
func TestTickStrippedStartTLSPausesTheMailbox(t *testing.T) {
	t.Parallel()
	// httptest's certificate is valid for 127.0.0.1.
	certSrv := httptest.NewTLSServer(nil)
	t.Cleanup(certSrv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(certSrv.Certificate())
	serverTLS := &tls.Config{Certificates: certSrv.TLS.Certificates}

	f := newFixture(t, fixtureOptions{leads: 3, mailboxes: 1, steps: oneStep})
	stripped := smtptest.NewRaw(t, smtptest.RawOptions{StartTLS: serverTLS, StripStartTLS: true})
	point := func(raw *smtptest.Raw) {
		f.pointMailbox("sdr01@acme.test", strings.Replace(raw.URL(), "smtp://", "smtp://sdr01@", 1)+"?tls=required")
	}
	point(stripped)
	f.exec(`UPDATE mailboxes SET password_env = 'RINDA_TEST_PW'`)
	f.mailer = NewMailer(MailerOptions{TLSConfig: &tls.Config{RootCAs: pool}, LookupEnv: func(string) (string, bool) { return "pw", true }})
	before := f.rowStates()

	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeMailboxPaused] != 1 || rep.Outcomes[OutcomeTransient] != 0 || rep.Sent != 0 {
		t.Fatalf("tick = %+v, want the mailbox paused, nothing transient or sent", rep)
	}
	if stripped.Auths() != 0 || len(stripped.Received()) != 0 {
		t.Errorf("the server without STARTTLS got %d AUTH and %d messages in clear", stripped.Auths(), len(stripped.Received()))
	}
	var reason string
	var paused bool
	if err := f.pool.QueryRow(context.Background(), `SELECT coalesce(pause_reason, ''),
		coalesce(paused_until BETWEEN now() + interval '50 minutes' AND now() + interval '70 minutes', false)
		FROM mailboxes WHERE address = 'sdr01@acme.test'`).Scan(&reason, &paused); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(reason, "mailbox_refused") || !strings.Contains(reason, "did not offer STARTTLS") || !strings.Contains(reason, "requires TLS") {
		t.Errorf("pause_reason %q, want mailbox_refused saying the server did not offer STARTTLS the mailbox requires", reason)
	}
	if !paused {
		t.Error("the mailbox is not paused for the refused mailbox's hour")
	}
	if n := f.count(`SELECT count(*) FROM events WHERE kind = 'mailbox_paused' AND payload->>'kind' = 'mailbox_refused'`); n != 1 {
		t.Errorf("%d mailbox_paused events, want 1", n)
	}
	for id, now := range f.rowStates() {
		if was := before[id]; now.status != "active" || now.attempts != was.attempts {
			t.Errorf("enrollment %d: %+v, want active with its %d attempts", id, now, was.attempts)
		}
	}

	// STARTTLS offered again: the first tick after the pause sends, over TLS.
	offered := smtptest.NewRaw(t, smtptest.RawOptions{StartTLS: serverTLS})
	point(offered)
	f.exec(`UPDATE mailboxes SET paused_until = now() - interval '1 second'`)
	f.due()
	if rep := f.tick(TickOptions{}); rep.Sent != 3 {
		t.Fatalf("with STARTTLS offered: tick = %+v, want 3 sent", rep)
	}
	if offered.Auths() != 1 || len(offered.Received()) != 3 {
		t.Errorf("the server with STARTTLS got %d AUTH and %d messages, want 1 and 3", offered.Auths(), len(offered.Received()))
	}
}
