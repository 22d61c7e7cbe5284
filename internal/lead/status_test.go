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
	// An enriched lead never moves; a not_found one only when an import
	// brings its address.
	for _, next := range Statuses {
		if Enriched.CanBecome(next) {
			t.Errorf("enriched -> %s allowed; an enriched lead never moves", next)
		}
		if NotFound.CanBecome(next) && next != Enriched {
			t.Errorf("not_found -> %s allowed; only an import moves it (to enriched)", next)
		}
	}
	// Only a tick's decision gives up on a lead.
	for _, s := range Statuses {
		if s != InProgress && (s.CanBecome(NotFound) || s.CanBecome(EnrichmentFailed)) {
			t.Errorf("%s may become not_found or enrichment_failed without a claim", s)
		}
	}
	for from, tos := range transitions {
		for _, to := range append(tos, from) {
			if !to.Valid() {
				t.Errorf("transition table names unknown status %q", to)
			}
		}
	}
}
