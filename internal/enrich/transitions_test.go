package enrich

import (
	"fmt"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
)

// TestDecideMovesOnlyAlongLeadTransitions runs decide() over every kind of
// waterfall result, at the first and the last attempt, and checks that each
// new status is a move lead.Status allows from in_progress (the claimed
// state); and that every move the table allows from in_progress is one
// decide() can make, so the table and decide() cannot drift apart.
func TestDecideMovesOnlyAlongLeadTransitions(t *testing.T) {
	r := &tickRun{cfg: TickConfig{MaxAttempts: 5, NegativeCache: 24 * time.Hour, Backoff: Backoff{Base: time.Second, Cap: time.Minute}}}
	soon := block{until: time.Now().Add(time.Minute), reason: "breaker open", provider: "hunter"}
	perr := &ProviderError{Provider: "hunter", Kind: KindRateLimited}
	results := map[string]leadResult{
		"found":            {email: "ada@example.test", foundBy: "hunter"},
		"transient":        {transient: perr},
		"rate blocked":     {rateBlocked: soon},
		"quota":            {quota: &ProviderError{Provider: "hunter", Kind: KindQuota}},
		"blocked + missed": {blocked: soon, missed: []string{"findymail"}},
		"blocked":          {blocked: soon},
		"throttle wait":    {waiting: soon, missed: []string{"findymail"}},
		"missed":           {missed: []string{"findymail"}},
		"verify pending":   {held: "ada@example.test", heldBy: "hunter", verify: &leadResult{quota: &ProviderError{Provider: "millionverifier", Kind: KindQuota}}},
		"verify keyless":   {held: "ada@example.test", heldBy: "hunter", verify: &leadResult{unusable: &ProviderError{Provider: "millionverifier", Kind: KindAuth}}},
		"nothing called":   {},
		"key refused":      {unusable: &ProviderError{Provider: "hunter", Kind: KindAuth}},
	}
	produced := map[lead.Status]bool{}
	for name, lr := range results {
		for _, attempts := range []int{1, r.cfg.MaxAttempts} {
			o := r.decide(store.ClaimedLead{LeadID: 1, Attempts: attempts}, &lr)
			if !lead.InProgress.CanBecome(o.Status) {
				t.Errorf("%s at attempt %d: decide() moved in_progress to %q, which lead.Status does not allow", name, attempts, o.Status)
			}
			produced[o.Status] = true
		}
	}
	for _, s := range lead.Statuses {
		// in_progress -> in_progress is the claim retaking an expired lease.
		if s != lead.InProgress && lead.InProgress.CanBecome(s) && !produced[s] {
			t.Errorf("lead.Status allows in_progress -> %s, but decide() never produces it: %s", s, fmt.Sprint(produced))
		}
	}
}
