package tick

import (
	"testing"
	"time"
)

func TestBackoffDoublesToTheCeiling(t *testing.T) {
	t.Parallel()
	cases := map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 32 * time.Second, 7: time.Minute, 1000: time.Minute}
	for attempt, want := range cases {
		if got := Backoff(attempt, time.Second, time.Minute); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", attempt, got, want)
		}
	}
}
