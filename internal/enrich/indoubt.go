package enrich

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// InDoubtRetryEnv says how long a lead waits before a finder whose answer
// for it was lost (in doubt: the call may have been billed) is asked again.
const InDoubtRetryEnv = "RINDA_IN_DOUBT_RETRY_AFTER"

// InDoubtRetryDefault is the memo's negative cache: a day, after which a
// lead stranded by a killed tick recovers by itself, at the price of a
// possible second charge per call in flight at the kill.
const InDoubtRetryDefault = 24 * time.Hour

// InDoubtRetryOff keeps a lead whose finders are all in doubt for an
// operator (enrichment_failed until `requeue --refind`), as before.
const InDoubtRetryOff time.Duration = -1

// InDoubtRetryFromEnv reads RINDA_IN_DOUBT_RETRY_AFTER: a duration such as
// 24h (the default when unset), or off (InDoubtRetryOff).
func InDoubtRetryFromEnv(getenv func(string) string) (time.Duration, error) {
	switch v := strings.TrimSpace(getenv(InDoubtRetryEnv)); v {
	case "":
		return InDoubtRetryDefault, nil
	case "off":
		return InDoubtRetryOff, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("invalid %s %q: use a duration such as 24h, or off", InDoubtRetryEnv, v)
		}
		return d, nil
	}
}

// doubtRetryAt is when the finders in doubt for l are asked again; zero
// when never (no doubt, or the retry is off).
func (r *tickRun) doubtRetryAt(l store.ClaimedLead) time.Time {
	if r.cfg.InDoubtRetryAfter <= 0 || len(l.DoubtedBy) == 0 || l.DoubtedAt.IsZero() {
		return time.Time{}
	}
	return l.DoubtedAt.Add(r.cfg.InDoubtRetryAfter)
}

// retryDoubt reports whether finder, in doubt for l, is asked again now.
func (r *tickRun) retryDoubt(l store.ClaimedLead, finder string) bool {
	at := r.doubtRetryAt(l)
	return !at.IsZero() && slices.Contains(l.DoubtedBy, finder) && !time.Now().Before(at)
}
