package tick

import (
	"context"
	"errors"
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

func TestSleep(t *testing.T) {
	t.Parallel()
	if err := Sleep(t.Context(), time.Millisecond); err != nil {
		t.Errorf("Sleep of a live context = %v, want nil after the wait", err)
	}
	if err := Sleep(t.Context(), 0); err != nil {
		t.Errorf("Sleep(0) of a live context = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// An hour: only the cancelled context can end this wait.
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep of a cancelled context = %v, want context.Canceled", err)
	}
	if err := Sleep(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(<0) of a cancelled context = %v, want context.Canceled", err)
	}
}
