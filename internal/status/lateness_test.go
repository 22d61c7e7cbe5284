package status

import "testing"

func TestLatenessNeverReadsAsNoneBesideOverdueSteps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		overdue, seconds int64
		want             string
	}{
		{0, 0, "-"},
		{0, 90, "-"},
		{1, 0, "0s"}, // fell due this second: late, if only just
		{3, 42, "42s"},
		{3, 7200, "2h00m"},
	} {
		if got := lateness(c.overdue, c.seconds); got != c.want {
			t.Errorf("lateness(%d, %d) = %q, want %q", c.overdue, c.seconds, got, c.want)
		}
	}
}
