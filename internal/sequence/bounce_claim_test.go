package sequence

import (
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
)

// The bounce guard counts at the claim: a mailbox whose server refuses
// every recipient is claimed only while its hard bounces in a row plus its
// sends in flight stay under its in_a_row limit. Three ticks at once, each
// claiming up to 30 rows: each claim may take at most the limit (claims
// running at once may each see the others' rows not yet committed), so no
// more than limit × ticks hard bounces in a row go out, where the guard
// alone, checking after the settle, let each tick's whole queue go.
func TestConcurrentTicksStopAtTheBounceLimitWhenClaiming(t *testing.T) {
	t.Parallel()
	const limit, ticks = 3, 3
	f := newFixture(t, fixtureOptions{leads: 90, mailboxes: 1, acceptDelay: acceptDelay,
		extraYAML: "bounce_guard: {rate: 0%, in_a_row: 3}\n"})
	f.srv.Script(smtptest.Rule{Stage: smtptest.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: "No such user"})
	for range 3 {
		f.parallelTicks(ticks, TickOptions{Batch: 30})
	}
	bounced := f.count(`SELECT count(*) FROM sends WHERE bounced_at IS NOT NULL`)
	t.Logf("%d hard bounces in a row before the pause", bounced)
	if bounced < limit {
		t.Fatalf("%d hard bounces recorded, want the limit (%d) reached", bounced, limit)
	}
	if bounced > limit*ticks {
		t.Errorf("%d hard bounces in a row went out, over the limit %d + the %d other ticks' claims in flight (%d each)",
			bounced, limit, ticks-1, limit)
	}
	if got := f.srv.Attempts("sdr01@acme.test"); got != bounced {
		t.Errorf("the server saw %d attempts, the sends table %d hard bounces", got, bounced)
	}
	if got := f.count(`SELECT count(*) FROM mailboxes WHERE paused_until > now()`); got != 1 {
		t.Errorf("mailbox not paused by the guard")
	}
}
