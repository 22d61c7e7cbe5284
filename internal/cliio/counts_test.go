package cliio

import "testing"

func TestCountsInNameOrder(t *testing.T) {
	t.Parallel()
	m := map[string]int{"transient": 1, "sent": 3, "bounced": 0}
	if got := Counts(m, "=", " "); got != "bounced=0 sent=3 transient=1" {
		t.Errorf("got %q", got)
	}
	if got := Counts(m, " ", ", "); got != "bounced 0, sent 3, transient 1" {
		t.Errorf("got %q", got)
	}
	if got := Counts(nil, "=", " "); got != "none" {
		t.Errorf("empty: got %q, want none", got)
	}
}
