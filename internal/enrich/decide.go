package enrich

import (
	"slices"
	"time"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
)

// stepKind is how one provider step of the waterfall ended.
type stepKind int

const (
	// stepAnswered: the provider answered (found, missed, or rejected the
	// lead's input).
	stepAnswered stepKind = iota
	// stepQuota: the provider's quota is used up, by its answer now or
	// earlier in this tick (then no call was made).
	stepQuota
	// stepBlocked: a guard refused the call; none was made.
	stepBlocked
	// stepUnusable: the provider refused our credentials (now or earlier in
	// this tick); an operator must fix the key. No call was made, or none
	// will be for the rest of the tick.
	stepUnusable
	// stepFailed: a transient failure (rate limit, 5xx, timeout).
	stepFailed
	// stepStopped: the tick is stopping; the lead goes back untouched.
	stepStopped
	// stepDoubted: the tick cut the call after its request went out: the
	// answer is lost, maybe billed (CallInDoubt).
	stepDoubted
)

type step struct {
	kind    stepKind
	outcome CallOutcome
	err     *ProviderError
	until   time.Time
	reason  string
	// cause and retryAfter say what opened a breaker that blocked the call
	// (Admission.Cause, Admission.RetryAfter).
	cause      string
	retryAfter time.Duration
	// called: the step is this lead's own call, not a remembered answer.
	called bool
}

// reasonGuardError blocks a call the guard could not decide on: retried
// after a short backoff, like a rate block.
const reasonGuardError = "guard_error"

// leadResult gathers what the waterfall met for one lead; decide turns it
// into the lead's outcome.
type leadResult struct {
	email, foundBy string
	// held is an address heldBy found (and was billed for) that the
	// verifier could not judge; verify is what the verifier met.
	held, heldBy string
	verify       *leadResult
	transient    *ProviderError
	quota        *ProviderError
	// blocked is the earliest-ending guard block that is a verdict (quota
	// or a refused key behind a breaker, a window of QuotaRetryAfterThreshold
	// or more); waiting the earliest that is only a wait (a throttling or
	// outage breaker, or a ceiling, ending sooner); rateBlocked the
	// earliest rate block or undecided guard. Only blocked can park a lead.
	blocked, waiting, rateBlocked block
	// missed are the finders that answered without a usable address, in
	// this attempt or an earlier one: none is asked again. doubted are the
	// finders whose answer an earlier tick lost: none is asked again
	// either, but they did not say the lead has no address.
	missed  []string
	doubted []string
	// doubtedNow: a call of this attempt joined doubted.
	doubtedNow bool
	unusable   *ProviderError
	// called: a call for this lead failed, so the adapter and waterfall
	// logged it and the outcome line completes the chain.
	called bool
}

// answered reports a provider's answer about the lead: an address, a
// miss, or its quota (a failure or no call at all says nothing of it).
func (s step) answered() bool {
	return s.kind == stepAnswered || s.kind == stepQuota && s.called
}

// doubtNow records that provider's call for the lead was cut with its
// request out: it joins the finders in doubt, whose wait starts now.
func (lr *leadResult) doubtNow(provider string) {
	if !slices.Contains(lr.doubted, provider) {
		lr.doubted = append(lr.doubted, provider)
	}
	lr.doubtedNow = true
}

// block is a guard's refusal of one provider for one lead.
type block struct {
	until      time.Time
	reason     string
	cause      string
	retryAfter time.Duration
	provider   string
}

// earlier keeps the block that ends first.
func (b *block) earlier(provider string, s step) {
	if b.until.IsZero() || s.until.Before(b.until) {
		*b = block{until: s.until, reason: s.reason, cause: s.cause, retryAfter: s.retryAfter, provider: provider}
	}
}

func (b block) set() bool { return !b.until.IsZero() }

// miss records that provider answered without a usable address.
func (lr *leadResult) miss(provider string) {
	if !slices.Contains(lr.missed, provider) {
		lr.missed = append(lr.missed, provider)
	}
}

func (lr *leadResult) add(provider string, s step) {
	if s.called { // only failedStep marks a step called, always with its error
		lr.called = true
	}
	switch s.kind {
	case stepAnswered:
		lr.miss(provider)
	case stepQuota:
		if lr.quota == nil {
			lr.quota = s.err
		}
	case stepBlocked:
		lr.addBlock(provider, s, time.Now())
	case stepUnusable:
		lr.unusable = s.err
	case stepFailed:
		if lr.transient == nil || s.err.RetryAfter > lr.transient.RetryAfter {
			lr.transient = s.err
		}
	}
}

// addBlock keeps the earliest block of each sort at now: a rate block, or
// a guard that could not decide, ends within seconds; a block that is a
// wait (see waits) ends within QuotaRetryAfterThreshold; the rest are
// verdicts.
func (lr *leadResult) addBlock(provider string, s step, now time.Time) {
	switch {
	case s.reason == ReasonRateLimited || s.reason == reasonGuardError:
		lr.rateBlocked.earlier(provider, s)
	case waits(s, now):
		lr.waiting.earlier(provider, s)
	default:
		lr.blocked.earlier(provider, s)
	}
}

// waits reports whether a guard block is a wait rather than a verdict: it
// ends within QuotaRetryAfterThreshold of now (the memo's line between a
// throttle and an exhausted quota) and no used-up quota or refused key is
// behind it.
func waits(s step, now time.Time) bool {
	if s.cause == string(KindQuota) || s.cause == string(KindAuth) {
		return false
	}
	return s.until.Sub(now) < QuotaRetryAfterThreshold
}

// decide maps what the waterfall met to the lead's next state. Precedence:
//  1. an address wins;
//  2. an address found but not verified (the verifier was out of credits,
//     throttled, down or refused our key) is kept and waits for the
//     verifier (verifyOutcome): no finder is asked or paid for it again;
//  3. a transient failure retries soon (a later attempt may succeed), up to
//     MaxAttempts;
//  4. a rate block (the provider's next token lies beyond this tick's
//     deadline) or a guard that could not decide waits for its end: that
//     provider can serve the lead within seconds, so it is never parked,
//     whatever the other providers said;
//  5. a block that is a wait (a breaker opened by throttling or outages, or
//     any guard block, ending within QuotaRetryAfterThreshold) waits for its
//     end, whatever the others said: a throttle is a wait, not a verdict;
//  6. a quota answer, or a block that is a verdict after another provider
//     missed, parks the lead for the negative cache: no provider can serve
//     it within QuotaRetryAfterThreshold;
//  7. a block that is a verdict alone waits for its end (no call was made,
//     so waiting is free);
//  8. a finder whose answer a tick lost (doubted) and nothing found:
//     pending until InDoubtRetryAfter past the doubt, when it is asked
//     again (or enrichment_failed, for an operator, when that is off);
//     else clean misses are not_found; a provider with a refused key
//     counts as absent, or the lead would loop until the key is fixed;
//  9. only refused keys: wait AuthRetryDefault, no call made.
//
// Quota and blocks refund the claim's attempt: they are not the lead's
// failures, so they never push it towards enrichment_failed. The finders
// that missed are kept with the lead, so none is asked again.
func (r *tickRun) decide(l store.ClaimedLead, lr *leadResult) store.EnrichOutcome {
	o := store.EnrichOutcome{LeadID: l.LeadID, MissedBy: lr.missed, DoubtedBy: lr.doubted, DoubtNow: lr.doubtedNow}
	switch {
	case lr.email != "":
		o.Status, o.Email, o.Provider = lead.Enriched, lr.email, lr.foundBy
	case lr.held != "":
		r.verifyOutcome(l, lr, &o)
	case r.waitOutcome(l, lr, &o, true):
	case len(lr.doubted) > 0 && (len(lr.missed) > 0 || lr.unusable == nil):
		r.doubtOutcome(l, lr, &o)
	case len(lr.missed) > 0 || lr.unusable == nil:
		o.Status = lead.NotFound
		if len(lr.missed) > 0 {
			o.Provider = lr.missed[len(lr.missed)-1]
		}
	default:
		o.Status, o.Delay, o.Refund = lead.Pending, AuthRetryDefault, true
		o.Provider, o.LastError = lr.unusable.Provider, lr.unusable.Error()
	}
	return o
}

// waitOutcome fills o when what lr met makes the lead wait (rules 3 to 7 of
// decide) and reports whether it did. giveUp lets transient failures end
// in enrichment_failed at MaxAttempts.
func (r *tickRun) waitOutcome(l store.ClaimedLead, lr *leadResult, o *store.EnrichOutcome, giveUp bool) bool {
	now := time.Now()
	switch {
	case lr.transient != nil:
		o.Provider = lr.transient.Provider
		if giveUp && l.Attempts >= r.cfg.MaxAttempts {
			o.Status, o.LastError = lead.EnrichmentFailed, lr.transient.Error()
			return true
		}
		o.Status, o.Delay = lead.Pending, r.cfg.Backoff.Retry(l.Attempts, lr.transient.RetryAfter)
		o.LastError = failureWait(lr.transient, now.Add(o.Delay))
	case lr.rateBlocked.set():
		o.Status, o.DueAt, o.Refund = lead.Pending, lr.rateBlocked.until, true
		o.Provider, o.LastError = lr.rateBlocked.provider, lr.rateBlocked.text()
	case lr.waiting.set():
		o.Status, o.DueAt, o.Refund = lead.Pending, lr.waiting.until, true
		o.Provider, o.LastError = lr.waiting.provider, lr.waiting.text()
	case lr.quota != nil:
		o.Status, o.Delay, o.Refund = lead.Unreachable, r.cfg.NegativeCache, true
		o.Provider, o.LastError = lr.quota.Provider, lr.quota.Error()
	case lr.blocked.set() && len(lr.missed) > 0:
		o.Status, o.Delay, o.Refund = lead.Unreachable, r.cfg.NegativeCache, true
		o.Provider, o.LastError = lr.blocked.provider, lr.blocked.text()+" (and "+joinNames(lr.missed)+" found nothing)"
	case lr.blocked.set():
		o.Status, o.DueAt, o.Refund = lead.Pending, lr.blocked.until, true
		o.Provider, o.LastError = lr.blocked.provider, lr.blocked.text()
	default:
		return false
	}
	return true
}

// verifyOutcome keeps an address found but not verified and makes the lead
// wait for its verifier as decide would for a finder, except that it never
// gives up on it (the address is paid for) and a refused key waits
// AuthRetryDefault.
func (r *tickRun) verifyOutcome(l store.ClaimedLead, lr *leadResult, o *store.EnrichOutcome) {
	o.Held, o.HeldBy = lr.held, lr.heldBy
	v := lr.verify
	if !r.waitOutcome(l, v, o, false) {
		o.Status, o.Delay, o.Refund = lead.Pending, AuthRetryDefault, true
		if v.unusable != nil {
			o.Provider, o.LastError = v.unusable.Provider, v.unusable.Error()
		}
	}
	o.LastError = "verify pending: " + lr.held + " (found by " + lr.heldBy + ") waits for its verifier: " + o.LastError
}

// doubtOutcome: not a verdict, a finder's answer was lost (maybe billed).
// The lead waits for InDoubtRetryAfter, then asks it again, a possible
// second charge; with the retry off only an operator can say whether to
// pay for it again.
func (r *tickRun) doubtOutcome(l store.ClaimedLead, lr *leadResult, o *store.EnrichOutcome) {
	o.Provider = lr.doubted[0]
	lost := joinNames(lr.doubted) + "'s answer to an earlier call was lost (the tick that made it could not record it; it may have been billed): "
	switch at := r.doubtRetryAt(l); {
	case r.cfg.InDoubtRetryAfter <= 0:
		o.Status = lead.EnrichmentFailed
		o.LastError = lost + "not asked again (" + InDoubtRetryEnv + "=off); 'rindactl requeue --status=enrichment_failed --refind' asks again"
	case lr.doubtedNow || !at.After(time.Now()):
		// Asked again a full wait from now: the doubt is new, or the finder
		// could not be asked when it was due (no key for it here).
		o.Status, o.Delay, o.Refund = lead.Pending, r.cfg.InDoubtRetryAfter, true
		o.LastError = lost + "asked again in " + r.cfg.InDoubtRetryAfter.String() + " (" + InDoubtRetryEnv + "), a possible second charge"
	default:
		o.Status, o.DueAt, o.Refund = lead.Pending, at, true
		o.LastError = lost + "asked again at " + at.UTC().Format(time.RFC3339) + " (" + InDoubtRetryEnv + "), a possible second charge"
	}
	if len(lr.missed) > 0 {
		o.LastError += " (" + joinNames(lr.missed) + " found nothing)"
	}
}
