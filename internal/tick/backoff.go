package tick

import "time"

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
