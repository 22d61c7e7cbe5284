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
// orders the claims) keeps it, and a lane sends after a bounce only once
// the guard has judged it, so no more than the limit - 1 + one send per
// tick hard-bounce in a row (docs/email.md). Before the claim counted,
// every tick claimed it and sent its queue until the guard, checking after
// each settle, paused it (20 and 40 with five ticks); before the lane
// waited for the verdict, 11 went out.
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
	if bound := limit - 1 + ticks; bounced > bound {
		t.Errorf("%d hard bounces in a row went out, over the limit %d - 1 + one send per tick (%d)", bounced, limit, ticks)
	}
	if got := f.srv.Attempts("sdr01@acme.test"); got != bounced {
		t.Errorf("the server saw %d attempts, the sends table %d hard bounces", got, bounced)
	}
	if got := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until > now()`); got != 1 {
		t.Errorf("mailbox not paused by the guard")
	}
}

// A mailbox with neither cap nor gap is claimed without a row lock, so
// ticks starting together each claim a batch of it before any has
// settled a bounce. The first settle to see the limit pauses the mailbox;
// every other tick stops at its next bounce too, rather than sending the
// rest of its batch into the bounces because the guard found the mailbox
// already paused and left it alone, and while its bounces waited for the
// settle writer (issue 39 item 4: before, 19-53 of 100 in a row).
func TestTicksClaimingAnUncappedMailboxTogetherStopAtThePause(t *testing.T) {
	t.Parallel()
	const limit, ticks, batch = 3, 4, 25
	f := newFixture(t, fixtureOptions{leads: ticks * batch, mailboxes: 1, acceptDelay: acceptDelay,
		extraYAML: "bounce_guard: {rate: 0%, in_a_row: 3}\n"})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"})
	f.parallelTicks(ticks, TickOptions{Batch: batch})
	bounced := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`)
	t.Logf("%d hard bounces in a row before every tick stopped", bounced)
	if bounced < limit {
		t.Fatalf("%d hard bounces recorded, want the limit (%d) reached", bounced, limit)
	}
	if got := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until > now()`); got != 1 {
		t.Fatalf("mailbox not paused by the guard")
	}
	// A tick sends after a bounce only once the guard judged it: one send
	// per tick past the last verdict below the limit, at most.
	if bound := limit - 1 + ticks; bounced > bound {
		t.Errorf("%d hard bounces in a row went out, over the limit %d - 1 + one send per tick (%d)", bounced, limit, ticks)
	}
	if got := f.srv.Attempts("sdr01@acme.test"); got != bounced {
		t.Errorf("the server saw %d attempts, the sends table %d hard bounces", got, bounced)
	}
}
