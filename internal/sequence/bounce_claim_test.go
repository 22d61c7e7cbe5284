package sequence

import (
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// The bounce guard counts at the claim: a mailbox is not claimed once its
// hard bounces in a row plus the rows other ticks have in flight on it
// reach its in_a_row limit. Eight ticks at once, each claiming 5 rows a
// batch (two batches in flight at most), against a server refusing every
// recipient: the first tick to claim the mailbox (its cap's row lock
// orders the claims) keeps it, so no more than the limit + that tick's
// rows in flight (2 × 5) hard-bounce in a row, + one batch of a claim that
// lands between the settle completing the streak and the guard's pause
// (docs/email.md). Before, every tick claimed it and sent its queue until
// the guard, checking after each settle, paused it (20 and 40 with five
// ticks).
func TestConcurrentTicksStopAtTheBounceLimitWhenClaiming(t *testing.T) {
	t.Parallel()
	const limit, ticks, batch = 3, 8, 5
	f := newFixture(t, fixtureOptions{leads: 100, mailboxes: 1, dailyCap: 1000, acceptDelay: acceptDelay,
		extraYAML: "bounce_guard: {rate: 0%, in_a_row: 3}\n"})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"})
	for range 3 {
		f.parallelTicks(ticks, TickOptions{Batch: batch})
	}
	bounced := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`)
	t.Logf("%d hard bounces in a row before the pause", bounced)
	if bounced < limit {
		t.Fatalf("%d hard bounces recorded, want the limit (%d) reached", bounced, limit)
	}
	if bound := limit + 3*batch; bounced > bound {
		t.Errorf("%d hard bounces in a row went out, over the limit %d + one tick's rows in flight (%d) + one batch", bounced, limit, 2*batch)
	}
	if got := f.srv.Attempts("sdr01@acme.test"); got != bounced {
		t.Errorf("the server saw %d attempts, the sends table %d hard bounces", got, bounced)
	}
	if got := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until > now()`); got != 1 {
		t.Errorf("mailbox not paused by the guard")
	}
}
