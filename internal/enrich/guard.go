package enrich

import (
	"context"
	"time"
)

// Guard decides, around every provider call a tick makes, whether the call
// may go out (circuit breaker, token bucket, spend ceiling) and learns how it
// went. The tick calls Admit right before a call and Settle right after it,
// for finders and verifiers alike. Implementations keep their state where
// every process sees it (Postgres), because a cron tick remembers nothing.
//
// A blocked call is a deliberate block, not a failure: the waterfall skips
// that provider for the lead without calling it and without charging the
// lead; when no provider is left, the lead waits until the earliest Until.
// A rate block (ReasonRateLimited) never parks a lead in the negative cache:
// the provider can serve it in seconds.
type Guard interface {
	// Admit asks whether call may be made now. An error means the guard could
	// not decide (e.g. the database is unreachable): the tick then makes no
	// call and puts the lead back to be retried later.
	Admit(ctx context.Context, call Call) (Admission, error)
	// Settle reports the result of an admitted call (Allowed true). It is
	// called exactly once per admitted call, also when the call failed or the
	// tick is shutting down. A Settle error is logged; the lead's outcome
	// stands.
	Settle(ctx context.Context, a Admission, res CallResult) error
}

// ReasonRateLimited is the Admission.Reason of a token-bucket refusal: the
// provider works, only its next rate slot lies beyond the caller's wait.
const ReasonRateLimited = "rate_limited"

// CauseProbe is the Admission.Cause of a breaker whose window is over while
// another caller's half-open probe decides: a wait of at most the probe's
// lease.
const CauseProbe = "probe"

// Call identifies one intended provider call.
type Call struct {
	// TickID is the calling tick (the lease owner, locked_by); a guard may
	// use it as the half-open probe owner or in its call ledger.
	TickID      string
	WorkspaceID int64
	// Provider is the finder's or verifier's Name().
	Provider string
	LeadID   int64
	// OwnKey: the call uses the workspace's own API key, so it draws on
	// that account's bucket (Account) rather than the host key's.
	OwnKey bool
	// SecondCharge: the call asks a finder again for a lead whose earlier
	// answer from it was lost (in doubt); the provider may bill the same
	// find twice. The tick has the guard record it (SecondChargeMarker)
	// before the call goes out.
	SecondCharge bool
	// WaitUntil is the latest time the caller can still make the call (its
	// tick's deadline). A guard may hand out a rate slot up to then and
	// sleep until it, so a tick works at its buckets' pace instead of
	// giving leads back. Zero: the guard's own short wait applies.
	WaitUntil time.Time
}

// Admission is a guard's answer to Admit.
type Admission struct {
	// Call is the call this admission answers; Settle gets it back.
	Call Call
	// Allowed: the call may go out now.
	Allowed bool
	// Until is, when not Allowed, the earliest time the call could be
	// admitted (breaker end, next token, next month). The tick moves the
	// lead's next_attempt_at there when no other provider can serve it.
	Until time.Time
	// Reason says why a call was not allowed, for logs and last_error:
	// e.g. "breaker_open", "rate_limited", "ceiling_reached".
	Reason string
	// Cause says, for a breaker_open refusal, what opened the breaker: the
	// error kind that tripped it (quota_exhausted, auth, rate_limited,
	// unavailable), an operator's reason, or CauseProbe when its window is
	// over and another caller holds the probe. RetryAfter is the provider's
	// Retry-After behind a throttling breaker's window (0: none given).
	// Together with Until they decide whether the block is a wait or a
	// verdict (see decide).
	Cause      string
	RetryAfter time.Duration
	// Probe marks the single half-open call let through after a breaker
	// expired; its result decides whether the breaker closes.
	Probe bool
	// Ref is the guard's own reference for Settle (e.g. its ledger row id).
	// The tick passes it back untouched.
	Ref int64
	// Waited is how long Admit slept for the call's rate slot.
	Waited time.Duration
}

// CallOutcome is how an admitted call ended, as recorded by guards.
type CallOutcome string

const (
	// CallFound: a finder found an address, or a verifier judged it
	// deliverable.
	CallFound CallOutcome = "found"
	// CallNotFound: the provider answered cleanly without a usable address
	// (a finder's miss, or an undeliverable verdict).
	CallNotFound CallOutcome = "not_found"
	// CallFailed: the call ended in Err.
	CallFailed CallOutcome = "failed"
	// CallSkipped: the call was admitted but never made: the tick learned
	// meanwhile of the pair's quota or a refused key, or the wait for its
	// token was cut short. The guard gives back what it reserved, frees a
	// probe it held, and leaves the breaker alone otherwise.
	CallSkipped CallOutcome = "skipped"
	// CallCancelled: the call went out but the tick's own context ended it
	// (Err is KindCancelled). It says nothing about the provider: the guard
	// refunds and frees a probe as for a skipped call, and the breaker's
	// failure streak stays as it was.
	CallCancelled CallOutcome = "cancelled"
	// CallInDoubt: the call's request went out, then the tick cut it (its
	// deadline, or CallTimeout after a stop) before the answer came. The
	// provider may have billed it: the guard keeps it billed, outcome
	// in_doubt, and learns nothing about the provider; the lead is not
	// sent to that finder again before InDoubtRetryAfter.
	CallInDoubt CallOutcome = "in_doubt"
)

// SecondChargeMarker is a guard that records, for an admitted call with
// Call.SecondCharge, that it may bill a find a second time (its ledger
// row), before the call goes out.
type SecondChargeMarker interface {
	MarkSecondCharge(ctx context.Context, a Admission) error
}

// CallResult is what Settle learns about an admitted call.
type CallResult struct {
	Outcome CallOutcome
	// Err is the classified failure when Outcome is CallFailed, else nil.
	// Err.Kind == KindQuota is what opens a breaker.
	Err *ProviderError
	// Duration is the call's wall time.
	Duration time.Duration
	// Found is the address a finder found (Outcome CallFound), "" for a
	// verifier or none. The guard keeps it with the lead when it bills the
	// call, so a paid address outlives a crash before the lead's outcome
	// is recorded.
	Found string
}

// OpenGuard admits every call and records nothing: the tick's guard when no
// real one is wired in.
type OpenGuard struct{}

func (OpenGuard) Admit(_ context.Context, call Call) (Admission, error) {
	return Admission{Call: call, Allowed: true}, nil
}

func (OpenGuard) Settle(context.Context, Admission, CallResult) error { return nil }
