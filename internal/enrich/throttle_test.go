package enrich_test

import (
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/lead"
)

// Issue 24: a throttle is a wait, not a verdict. Findymail answers 429 with
// Retry-After 120 (two minutes) and Hunter finds nobody. After five such
// answers the transient breaker opens for two minutes; a lead Hunter missed
// behind that breaker must wait for it, not sit a day in the negative
// cache. Shipped buckets and breaker settings.
func TestThrottleWithAMissingFinderParksNoLead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 60
	ids := e.seed(t, "acme", n)
	e.set.Findymail.RateLimit("120")
	e.set.Hunter.SetDirectory(func(string, string, string) (string, bool) { return "", false })

	cfg := e.config(t, "findymail", "hunter")
	rep := e.tick(t, cfg)
	if rep.Outcomes.Unreachable != 0 || rep.Outcomes.Pending != n {
		t.Fatalf("outcomes %+v: a two-minute throttle must park no lead (want %d pending)", rep.Outcomes, n)
	}
	if c := e.counts(t); c[lead.Unreachable] != 0 {
		t.Fatalf("states %v: no lead may be unreachable", c)
	}
	// Every lead says what it waits for: Findymail's throttle, with its
	// Retry-After, whether the 429 came back to it or the breaker did.
	for _, id := range ids {
		r := e.row(t, id)
		if r.CacheIn != nil || r.Provider != "findymail" || !strings.Contains(r.LastError, "findymail throttled until ") ||
			!strings.Contains(r.LastError, "Retry-After 120 s") {
			t.Fatalf("lead %d: %+v; want pending on findymail's throttle, naming its Retry-After", id, r)
		}
	}
	if !strings.Contains(e.log.String(), "findymail throttled until ") {
		t.Fatalf("the log does not name the throttle:\n%s", e.log.String())
	}

	// The wait ends and Findymail is back: each lead is asked of Findymail
	// again, and of Hunter (which already answered) never again.
	hunterCalls := e.set.Hunter.Count()
	if hunterCalls != n {
		t.Fatalf("hunter got %d calls, want one per lead (%d)", hunterCalls, n)
	}
	e.set.Findymail.SetMode(providertest.ModeHealthy)
	e.makeDue(t)
	rep = e.tick(t, cfg)
	if rep.Claimed != n || rep.Outcomes.Enriched+rep.Outcomes.NotFound != n || rep.Outcomes.Unreachable != 0 {
		t.Fatalf("after the wait: %+v; want all %d leads answered by findymail", rep, n)
	}
	if got := e.set.Hunter.Count(); got != hunterCalls {
		t.Fatalf("hunter got %d more calls after the wait; a provider that answered is not asked again", got-hunterCalls)
	}
}
