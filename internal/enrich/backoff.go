package enrich

import (
	"math/rand/v2"
	"time"

	"github.com/rindactl/rindactl/internal/tick"
)

const (
	// BackoffBaseDefault is the first retry's ceiling after a transient
	// failure.
	BackoffBaseDefault = 30 * time.Second
	// BackoffCapDefault bounds any one backoff.
	BackoffCapDefault = time.Hour
)

// Backoff is exponential backoff with full jitter: a uniform delay in
// [0, min(cap, base·2^(attempt-1))]. Full jitter spreads the retries of a
// batch that failed together (one provider outage) instead of sending them
// back as one burst.
type Backoff struct {
	Base time.Duration
	Cap  time.Duration
}

// Delay is the wait before the next try after the attempt-th failure.
func (b Backoff) Delay(attempt int) time.Duration {
	base, ceiling := b.Base, b.Cap
	if base <= 0 {
		base = BackoffBaseDefault
	}
	if ceiling <= 0 {
		ceiling = BackoffCapDefault
	}
	d := tick.Backoff(attempt, base, ceiling)
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// Retry is the wait before retrying a transient failure: the provider's
// Retry-After when it asks for longer than the backoff.
func (b Backoff) Retry(attempt int, retryAfter time.Duration) time.Duration {
	return max(retryAfter, b.Delay(attempt))
}
