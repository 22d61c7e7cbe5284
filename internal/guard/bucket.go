package guard

import (
	"context"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

// bucket is one call's view of its GCRA token bucket. The row keeps the
// theoretical arrival time (tat); a call is admitted when tat, advanced by
// one interval, stays within burst*interval (+ the accepted wait) of now.
// Admitting up to maxWait ahead hands out future slots: the caller sleeps
// until its slot, so callers on every host together never exceed rate and
// burst, and no slot is wasted.
type bucket struct {
	key      string
	interval time.Duration
	burst    int
	maxWait  time.Duration
}

func newBucket(call enrich.Call, lim providerspec.Limits, maxWait time.Duration) bucket {
	if !lim.Rate.Enabled() {
		return bucket{}
	}
	// A workspace's own key is its own account: its own bucket.
	key := enrich.Account(call.Provider, call.WorkspaceID, lim.PerWorkspace || call.OwnKey)
	return bucket{key: key, interval: lim.Rate.Interval(), burst: max(lim.Burst, 1), maxWait: maxWait}
}

// tolerance is how far tat may run ahead of a call that goes out at once.
func (b bucket) tolerance() time.Duration { return time.Duration(b.burst) * b.interval }

// horizon is how far ahead of now tat may be pushed by an admission.
func (b bucket) horizon() time.Duration {
	if b.key == "" {
		return 0
	}
	return b.tolerance() + b.maxWait
}

// due is when a refused call would conform: tat must fall back to within
// the tolerance of that time.
func (b bucket) due(row store.GuardAdmitRow) time.Time {
	if row.TAT == nil {
		return row.Now.Add(b.interval)
	}
	return maxTime(*row.TAT, row.Now).Add(b.interval - b.tolerance())
}

// wait sleeps until the admitted call's slot. The slot comes from the
// database clock, so the sleep is measured against the database's now, not
// this host's clock.
// It returns how long it slept.
func (b bucket) wait(ctx context.Context, row store.GuardAdmitRow) (time.Duration, error) {
	if b.key == "" || row.TAT == nil {
		return 0, nil
	}
	d := row.TAT.Add(-b.tolerance()).Sub(row.Now)
	if d <= 0 {
		return 0, nil
	}
	if err := tick.Sleep(ctx, d); err != nil {
		return 0, err
	}
	return d, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
