package tick

import (
	"context"
	"time"
)

// Backoff is exponential backoff without jitter: base·2^(attempt-1), capped
// at ceiling; attempt is 1-based (attempt ≤ 1 gives base). Ticks, the
// enrichment waterfall and the outbox all retry on this curve; callers that
// retry many rows at once add their own jitter.
func Backoff(attempt int, base, ceiling time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// Sleep waits d unless ctx ends first: nil after the full wait, ctx's error
// otherwise (at once when d is not positive and ctx has ended). Retry
// waits, rate slots and the demo's round cadence all wait this way.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
