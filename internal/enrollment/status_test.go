package enrollment

import "testing"

func TestTransitions(t *testing.T) {
	t.Parallel()
	for _, s := range Requeueable {
		if !s.CanBecome(Active) {
			t.Errorf("requeue moves %s to active, but the table refuses it", s)
		}
	}
	// Only an active row ends, and it may end in every way.
	for _, s := range Statuses {
		if !Active.CanBecome(s) {
			t.Errorf("active -> %s refused", s)
		}
		for _, next := range Statuses {
			if s != Active && next != Active && s.CanBecome(next) {
				t.Errorf("%s -> %s allowed: an ended enrollment only goes back to active (requeue)", s, next)
			}
		}
	}
	// Completed, bounced, replied and unsubscribed are for good.
	for _, s := range []Status{Completed, Bounced, Replied, Unsubscribed} {
		if len(transitions[s]) != 0 {
			t.Errorf("%s may move to %v; it is for good", s, transitions[s])
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
