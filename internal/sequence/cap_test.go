package sequence

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// acceptDelay is how long the test SMTP server takes per message, like the
// provider of the report: long enough that the tick claims its next
// batch while the previous one is still sending.
const acceptDelay = 20 * time.Millisecond

// overCap lists the mailboxes with more messages sent or in doubt in the
// last 24 hours than their cap in force, from the sends rows.
func (f *fixture) overCap() []string {
	f.t.Helper()
	rows, err := f.pool.Query(context.Background(), `SELECT m.address, m.cap_today, count(s.*)
		FROM mailboxes m JOIN sends s ON s.mailbox_id = m.id AND s.status <> 'failed'
		WHERE m.cap_today > 0
		GROUP BY m.id HAVING count(s.*) > m.cap_today`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var over []string
	for rows.Next() {
		var addr string
		var limit, n int
		if err := rows.Scan(&addr, &limit, &n); err != nil {
			f.t.Fatal(err)
		}
		over = append(over, fmt.Sprintf("%s sent %d / %d", addr, n, limit))
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return over
}

// perSender counts what the SMTP server received per envelope sender.
func perSender(srv *smtptest.Server) map[string]int {
	n := map[string]int{}
	for _, m := range srv.Messages() {
		n[m.From]++
	}
	return n
}

// The first finding: 18 mailboxes at daily_cap 50, 1,800 due first
// steps, one default email tick against a server taking 20 ms per message.
// Before the fix the tick sent 1,306-1,349, up to 77 from one mailbox: the
// claim counted only committed sends, and the tick claims its next batch
// while the previous one is still sending.
func TestOneDefaultTickSendsExactlyTheDailyCaps(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 1800, mailboxes: 18, dailyCap: 50, acceptDelay: acceptDelay})
	// The default batch and concurrency; --max-duration well past the
	// work, so a loaded machine's slow sends are not released unsent.
	rep := f.tick(TickOptions{MaxDuration: 10 * time.Minute})
	for addr, n := range perSender(f.srv) {
		if n > 50 {
			t.Errorf("%s: the server received %d messages, over its daily cap of 50", addr, n)
		}
	}
	if over := f.overCap(); len(over) > 0 {
		t.Errorf("over cap: %v", over)
	}
	if got := f.srv.Received(); got != 900 {
		t.Errorf("the server received %d messages, want exactly 18 x 50 = 900 (report: %+v)", got, rep.Outcomes)
	}
}

// Three ticks at once, small batches, six mailboxes at daily_cap 20: no
// mailbox goes over its cap, and once they are done every mailbox has sent
// its 20.
func TestConcurrentTicksNeverTakeAMailboxOverItsCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 240, mailboxes: 6, dailyCap: 20, acceptDelay: acceptDelay})
	for round := 0; round < 4; round++ {
		f.parallelTicks(3, TickOptions{Batch: 10, MaxDuration: 10 * time.Minute})
		for addr, n := range perSender(f.srv) {
			if n > 20 {
				t.Fatalf("round %d: %s: the server received %d messages, over its daily cap of 20", round, addr, n)
			}
		}
	}
	if over := f.overCap(); len(over) > 0 {
		t.Errorf("over cap: %v", over)
	}
	if got := f.srv.Received(); got != 120 {
		t.Errorf("the server received %d messages, want 6 x 20 = 120", got)
	}
}

// A mailbox warming up at 3 a day never sends a 4th in 24 hours, whatever
// --batch, one tick or three at once.
func TestRampOfThreeNeverSendsAFourthWhateverTheBatch(t *testing.T) {
	t.Parallel()
	for _, batch := range []int{1, 2, 3, 4, 500} {
		for _, ticks := range []int{1, 3} {
			t.Run(fmt.Sprintf("batch%d/ticks%d", batch, ticks), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, fixtureOptions{leads: 9, mailboxes: 1, acceptDelay: acceptDelay,
					extraYAML: "ramp: {start: 3, step: 3, every: 1d, max: 30}\n"})
				for range 3 {
					f.parallelTicks(ticks, TickOptions{Batch: batch})
				}
				if got := f.srv.Received(); got != 3 {
					t.Errorf("the server received %d messages in a day from a mailbox whose ramp allows 3", got)
				}
			})
		}
	}
}

// parallelTicks runs n email ticks at once and waits for them.
func (f *fixture) parallelTicks(n int, opts TickOptions) {
	f.t.Helper()
	opts.Mailer = f.mailer
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := RunTick(context.Background(), f.tickPool, opts); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		f.t.Fatalf("tick: %v", err)
	}
}

// A step a dead tick left 'sending' is recorded delivery_unknown by the
// next tick whatever holds its mailbox back: at its cap (the 'sending' row
// itself takes the last slot), paused, or the enrollment replied meanwhile.
// Found by the invariant harness: before, the claim only took rows of
// mailboxes with room, so such a row stayed 'sending' until the mailbox
// had room again, or for good once it was disabled.
func TestTickRecordsACrashedSendWhateverHoldsItsMailbox(t *testing.T) {
	t.Parallel()
	for _, hold := range []string{"cap", "paused", "replied"} {
		t.Run(hold, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1, dailyCap: 1})
			f.exec(`INSERT INTO sends (enrollment_id, step, mailbox_id, message_id)
				SELECT e.id, 1, e.mailbox_id, 'crashed@acme.test' FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.email = 'lead1@example.test'`)
			f.exec(`UPDATE enrollments e SET locked_by = 'dead-tick', locked_until = now() - interval '1 minute', next_send_at = now() - interval '1 minute'
				FROM leads l WHERE l.id = e.lead_id AND l.email = 'lead1@example.test'`)
			switch hold {
			case "paused":
				f.exec(`UPDATE mailboxes SET paused_until = now() + interval '4 hours'`)
			case "replied":
				f.exec(`UPDATE enrollments e SET status = 'replied' FROM leads l WHERE l.id = e.lead_id AND l.email = 'lead1@example.test'`)
			}
			rep := f.tick(TickOptions{})
			if rep.Outcomes[OutcomeUnknown] != 1 {
				t.Errorf("outcomes %v, want the crashed step recorded unknown", rep.Outcomes)
			}
			if n := f.count(`SELECT count(*) FROM sends WHERE message_id = 'crashed@acme.test' AND status = 'delivery_unknown'`); n != 1 {
				t.Error("the crashed step's send is not delivery_unknown")
			}
			want := "delivery_unknown"
			if hold == "replied" {
				want = "replied"
			}
			if n := f.count(`SELECT count(*) FROM enrollments e JOIN leads l ON l.id = e.lead_id
				WHERE l.email = 'lead1@example.test' AND e.status = $1 AND e.locked_until IS NULL`, want); n != 1 {
				t.Errorf("the crashed enrollment is not %s and unleased", want)
			}
			if got := f.srv.Received(); got != 0 {
				t.Errorf("the server received %d messages; the cap (taken by the crashed send) or the pause allows none", got)
			}
		})
	}
}
