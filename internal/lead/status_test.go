package lead

import "testing"

func TestTransitions(t *testing.T) {
	for _, s := range Requeueable {
		if !s.CanBecome(Pending) {
			t.Errorf("requeue moves %s to pending, but the table refuses it", s)
		}
	}
	// The claim takes pending rows and unreachable ones out of their cache.
	for _, s := range []Status{Pending, Unreachable} {
		if !s.CanBecome(InProgress) {
			t.Errorf("the claim moves %s to in_progress, but the table refuses it", s)
		}
	}
	// Terminal states stay put: only requeue revives a failed lead.
	for _, s := range []Status{Enriched, NotFound} {
		for _, next := range Statuses {
			if s.CanBecome(next) {
				t.Errorf("%s -> %s allowed; a finished lead never moves", s, next)
			}
		}
	}
	if Pending.CanBecome(Enriched) {
		t.Error("pending -> enriched allowed without a claim")
	}
	for from, tos := range transitions {
		for _, to := range append(tos, from) {
			if !to.Valid() {
				t.Errorf("transition table names unknown status %q", to)
			}
		}
	}
}
