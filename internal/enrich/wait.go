package enrich

import (
	"fmt"
	"strings"
	"time"
)

// The words a waiting lead's last_error, `why lead` and the log use for
// what it waits for: the real cause and until when ("findymail throttled
// until 14:32:05 UTC, Retry-After 120 s"), never a blanket reason.

// clock is a due time as the words show it.
func clock(t time.Time) string { return t.UTC().Format("15:04:05 MST") }

// retryAfterText is ", Retry-After N s", or "" without one.
func retryAfterText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(", Retry-After %d s", int64(d.Round(time.Second)/time.Second))
}

// failureWait says what a lead waits for after a transient failure, due
// again at due.
func failureWait(pe *ProviderError, due time.Time) string {
	if pe.Kind == KindRateLimited {
		return fmt.Sprintf("%s throttled until %s%s (%s)", pe.Provider, clock(due), retryAfterText(pe.RetryAfter), pe.Error())
	}
	return fmt.Sprintf("%s failed, next attempt at %s (%s)", pe.Provider, clock(due), pe.Error())
}

// text says what a guard block holds the lead for, naming the breaker's
// cause where there is one.
func (b block) text() string {
	p, until := b.provider, clock(b.until)
	switch {
	case b.reason == ReasonRateLimited:
		return fmt.Sprintf("%s rate slot at %s (rate_limited: its token bucket is drawn down)", p, until)
	case b.reason == reasonGuardError:
		return fmt.Sprintf("%s not asked: the guard could not decide (%s); retry at %s", p, reasonGuardError, until)
	case b.reason != "breaker_open":
		return fmt.Sprintf("%s blocked until %s (%s)", p, until, b.reason)
	}
	switch b.cause {
	case string(KindRateLimited):
		return fmt.Sprintf("%s throttled until %s%s (breaker_open after repeated rate_limited answers)", p, until, retryAfterText(b.retryAfter))
	case string(KindUnavailable):
		return fmt.Sprintf("%s unavailable until %s%s (breaker_open after repeated failures)", p, until, retryAfterText(b.retryAfter))
	case string(KindQuota):
		return fmt.Sprintf("%s quota exhausted: breaker_open until %s", p, until)
	case string(KindAuth):
		return fmt.Sprintf("%s refused our key: breaker_open until %s", p, until)
	case CauseProbe:
		return fmt.Sprintf("%s breaker_open: its window is over and a probe call decides by %s", p, until)
	case "":
		return fmt.Sprintf("%s breaker_open until %s", p, until)
	}
	return fmt.Sprintf("%s breaker_open until %s (%s)", p, until, b.cause)
}

// joinNames lists provider names for a sentence.
func joinNames(names []string) string { return strings.Join(names, " and ") }
