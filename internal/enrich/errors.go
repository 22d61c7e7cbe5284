package enrich

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrorKind classifies a provider failure. The classification decides what
// the tick does next; there is deliberately no "other" kind, because the
// incident started with a catch block that mapped every error to one bucket.
type ErrorKind string

const (
	// KindQuota: the provider's plan or credits are used up. Permanent for
	// the (workspace, provider) pair until its reset: open the breaker, do not
	// retry.
	KindQuota ErrorKind = "quota_exhausted"
	// KindRateLimited: the provider throttles us for a short while. Transient;
	// retry after RetryAfter.
	KindRateLimited ErrorKind = "rate_limited"
	// KindUnavailable: 5xx, timeouts, connection errors, malformed bodies.
	// Transient; retry with exponential backoff.
	KindUnavailable ErrorKind = "unavailable"
	// KindInvalidLead: the provider rejects this lead's input. Permanent for
	// this lead only.
	KindInvalidLead ErrorKind = "invalid_lead"
	// KindAuth: missing or rejected API key, or a misconfigured endpoint.
	// Permanent for the provider until an operator fixes it; alert.
	KindAuth ErrorKind = "auth"
	// KindCancelled: the tick's own context ended the call (a signal, the
	// tick's deadline, outcomes it can no longer record). It says nothing
	// about the provider: no breaker streak, no attempt, no spend; the lead
	// goes back as it was. A provider's own timeout is KindUnavailable.
	KindCancelled ErrorKind = "cancelled"
)

// QuotaRetryAfterThreshold is the Retry-After at or above which a rate limit
// is treated as quota exhaustion: nobody should hold a lead for 10 minutes
// inside one bounded tick, and the memo's production data showed such answers
// meant the plan was used up.
const QuotaRetryAfterThreshold = 10 * time.Minute

// ProviderError is the one error type adapters return for a failed call.
// Message must never contain an API key: adapters build it from status codes
// and the provider's own error text, never from request URLs.
type ProviderError struct {
	Provider   string
	Kind       ErrorKind
	Status     int           // HTTP status, 0 when no response arrived
	RetryAfter time.Duration // 0 when the provider gave none
	ResetAt    time.Time     // when a quota resets, zero when unknown
	Message    string
	Err        error // underlying cause, already free of secrets
}

func (e *ProviderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Provider, e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; retry after %s", e.RetryAfter)
	}
	return b.String()
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Transient reports whether retrying the same call later may succeed.
func (e *ProviderError) Transient() bool {
	return e.Kind == KindRateLimited || e.Kind == KindUnavailable
}

// CancelledByTick is the error of a call to provider that the tick's
// context ctx, already done, ended; the message names its cause (the
// signal, the deadline, the lost database).
func CancelledByTick(ctx context.Context, provider string) *ProviderError {
	cause := context.Cause(ctx)
	if cause == nil { // ctx not done after all: still the tick's doing
		cause = context.Canceled
	}
	return &ProviderError{Provider: provider, Kind: KindCancelled, Message: "call cancelled by the tick: " + cause.Error(), Err: cause}
}

// AsProviderError finds a *ProviderError in err's chain.
func AsProviderError(err error) (*ProviderError, bool) {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe, true
	}
	return nil, false
}

// RateLimited builds the error for a throttling answer, lifting it to quota
// exhaustion when the provider asks us to wait QuotaRetryAfterThreshold or
// longer (the memo's isTransient rule).
func RateLimited(provider string, status int, retryAfter time.Duration, msg string) *ProviderError {
	kind := KindRateLimited
	if retryAfter >= QuotaRetryAfterThreshold {
		kind = KindQuota
	}
	return &ProviderError{Provider: provider, Kind: kind, Status: status, RetryAfter: retryAfter, Message: msg}
}

// quotaWords are the phrases providers use when a plan or its credits are
// used up. The incident's Findymail answered 429 with such a body and no
// Retry-After.
var quotaWords = []string{"credit", "quota", "plan", "limit", "billing", "subscription", "usage"}

// IsQuotaMessage reports whether a provider's error text speaks of credits,
// plan, quota or usage limits.
func IsQuotaMessage(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range quotaWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}
