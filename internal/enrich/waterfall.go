package enrich

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/address"
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
)

type step struct {
	kind    stepKind
	outcome CallOutcome
	err     *ProviderError
	until   time.Time
	reason  string
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
	transient      *ProviderError
	quota          *ProviderError
	// blocked is the earliest-ending guard block (breaker, ceiling);
	// rateBlocked the earliest rate block, which never parks a lead.
	blocked, rateBlocked block
	missedBy             string
	unusable             *ProviderError
	// called: a call for this lead failed, so the adapter and waterfall
	// logged it and the outcome line completes the chain.
	called bool
}

// block is a guard's refusal of one provider for one lead.
type block struct {
	until    time.Time
	reason   string
	provider string
}

// earlier keeps the block that ends first.
func (b *block) earlier(provider string, s step) {
	if b.until.IsZero() || s.until.Before(b.until) {
		*b = block{until: s.until, reason: s.reason, provider: provider}
	}
}

func (b block) set() bool { return !b.until.IsZero() }

func (b block) text() string { return b.provider + ": " + b.reason }

func (lr *leadResult) add(provider string, s step) {
	if s.called { // only failedStep marks a step called, always with its error
		lr.called = true
	}
	switch s.kind {
	case stepAnswered:
		lr.missedBy = provider
	case stepQuota:
		if lr.quota == nil {
			lr.quota = s.err
		}
	case stepBlocked:
		lr.addBlock(provider, s)
	case stepUnusable:
		lr.unusable = s.err
	case stepFailed:
		if lr.transient == nil || s.err.RetryAfter > lr.transient.RetryAfter {
			lr.transient = s.err
		}
	}
}

// addBlock keeps the earliest block of each sort: a rate block, or a guard
// that could not decide, ends within seconds and never parks the lead.
func (lr *leadResult) addBlock(provider string, s step) {
	if s.reason == ReasonRateLimited || s.reason == reasonGuardError {
		lr.rateBlocked.earlier(provider, s)
		return
	}
	lr.blocked.earlier(provider, s)
}

// decide maps what the waterfall met to the lead's next state. Precedence:
//  1. an address wins;
//  2. a transient failure retries soon (a later attempt may succeed), up to
//     MaxAttempts;
//  3. a rate block (the provider's next token lies beyond this tick's
//     deadline) or a guard that could not decide waits for its end: that
//     provider can serve the lead within seconds, so it is never parked,
//     whatever the other providers said;
//  4. a quota answer, or a breaker or ceiling block after another provider
//     missed, parks the lead for the negative cache: every provider that
//     could serve it is exhausted or blocked beyond the tick, and retrying
//     at the block's end would pay the providers that missed again every
//     few minutes;
//  5. a breaker or ceiling block alone waits for its end (no call was made,
//     so waiting is free);
//  6. clean misses are not_found; a provider with a refused key counts as
//     absent, or the lead would loop until the key is fixed;
//  7. only refused keys: wait AuthRetryDefault, no call made.
//
// Quota and blocks refund the claim's attempt: they are not the lead's
// failures, so they never push it towards enrichment_failed.
func (r *tickRun) decide(l store.ClaimedLead, lr *leadResult) store.EnrichOutcome {
	o := store.EnrichOutcome{LeadID: l.LeadID}
	switch {
	case lr.email != "":
		o.Status, o.Email, o.Provider = lead.Enriched, lr.email, lr.foundBy
	case lr.transient != nil:
		o.Provider, o.LastError = lr.transient.Provider, lr.transient.Error()
		if l.Attempts >= r.cfg.MaxAttempts {
			o.Status = lead.EnrichmentFailed
		} else {
			o.Status, o.Delay = lead.Pending, r.cfg.Backoff.Retry(l.Attempts, lr.transient.RetryAfter)
		}
	case lr.rateBlocked.set():
		o.Status, o.DueAt, o.Refund = lead.Pending, lr.rateBlocked.until, true
		o.Provider, o.LastError = lr.rateBlocked.provider, lr.rateBlocked.text()
	case lr.quota != nil:
		o.Status, o.Delay, o.Refund = lead.Unreachable, r.cfg.NegativeCache, true
		o.Provider, o.LastError = lr.quota.Provider, lr.quota.Error()
	case lr.blocked.set() && lr.missedBy != "":
		o.Status, o.Delay, o.Refund = lead.Unreachable, r.cfg.NegativeCache, true
		o.Provider, o.LastError = lr.blocked.provider, lr.blocked.text()+" (and "+lr.missedBy+" found nothing)"
	case lr.blocked.set():
		o.Status, o.DueAt, o.Refund = lead.Pending, lr.blocked.until, true
		o.Provider, o.LastError = lr.blocked.provider, lr.blocked.text()
	case lr.missedBy != "" || lr.unusable == nil:
		o.Status, o.Provider = lead.NotFound, lr.missedBy
	default:
		o.Status, o.Delay, o.Refund = lead.Pending, AuthRetryDefault, true
		o.Provider, o.LastError = lr.unusable.Provider, lr.unusable.Error()
	}
	return o
}

// work runs one claimed lead through the waterfall and queues its outcome.
// stop ends at MaxDuration or on ctx's cancellation; calls run under ctx, so
// a call in flight at MaxDuration completes while SIGTERM abandons it.
func (r *tickRun) work(ctx, stop context.Context, l store.ClaimedLead) {
	if stop.Err() != nil {
		r.release(l)
		return
	}
	if l.Email != "" {
		// The lead got an address (an import) since it was queued.
		r.finish(store.EnrichOutcome{LeadID: l.LeadID, Status: lead.Enriched})
		return
	}
	person := Lead{ID: l.LeadID, WorkspaceID: l.WorkspaceID, FirstName: l.FirstName, LastName: l.LastName, Company: l.Company, Domain: l.Domain}
	if !person.Valid() {
		r.finish(store.EnrichOutcome{LeadID: l.LeadID, Status: lead.NotFound,
			LastError: "invalid lead: a company domain and a first or last name are needed"})
		return
	}

	began := time.Now()
	lr, worked := r.waterfall(ctx, stop, l, person)
	if !worked {
		r.release(l)
		return
	}
	o := r.decide(l, &lr)
	if lr.called {
		// The last link of the log chain (adapter, waterfall, tick): what
		// the failed call means for the lead.
		r.log.Warn("lead outcome after a provider failure", "component", "tick", "lead_id", l.LeadID,
			"workspace_id", l.WorkspaceID, "provider", o.Provider, "status", o.Status,
			"retry_after_ms", max(time.Until(o.DueAt), o.Delay).Milliseconds(),
			"is_transient", o.Status == lead.Pending, "duration_ms", time.Since(began).Milliseconds(),
			"attempts", l.Attempts, "error", o.LastError)
	}
	r.finish(o)
}

// waterfall tries the finders in order, each found address through the
// verifier when there is one, and gathers what they met; false when the
// tick stopped first (the lead goes back untouched).
func (r *tickRun) waterfall(ctx, stop context.Context, l store.ClaimedLead, lead Lead) (leadResult, bool) {
	var lr leadResult
	for _, f := range r.cfg.Finders {
		var found Finding
		s := r.call(ctx, stop, l, f.Name(), findCall(f, lead, &found))
		switch {
		case s.kind == stepStopped:
			return lr, false
		case s.kind != stepAnswered || s.outcome != CallFound:
			lr.add(f.Name(), s)
			continue
		case r.cfg.Verifier == nil:
			lr.email, lr.foundBy = found.Email, f.Name()
			return lr, true
		}
		v := r.cfg.Verifier
		vs := r.call(ctx, stop, l, v.Name(), verifyCall(v, found.Email))
		switch {
		case vs.kind == stepStopped:
			return lr, false
		case vs.kind == stepAnswered && vs.outcome == CallFound:
			lr.email, lr.foundBy = found.Email, f.Name()
			return lr, true
		case vs.kind == stepAnswered:
			// Undeliverable: as if this finder had missed.
			lr.add(f.Name(), step{kind: stepAnswered})
		default:
			// Without the verifier no address can be accepted, so the
			// other finders cannot help this time.
			lr.add(v.Name(), vs)
			return lr, true
		}
	}
	return lr, true
}

// findCall asks finder f for lead's address, kept in found.
func findCall(f Finder, lead Lead, found *Finding) func(context.Context) (CallOutcome, error) {
	return func(ctx context.Context) (CallOutcome, error) {
		var err error
		*found, err = f.FindEmail(ctx, lead)
		if err == nil && found.Found {
			// Stored in its canonical spelling, like an imported address; an
			// address that has none (a bidi control, a bad domain) is no find.
			canonical, cerr := address.Canonical(found.Email)
			found.Email, found.Found = canonical, cerr == nil
		}
		return callOutcome(err, err == nil && found.Found)
	}
}

// verifyCall asks verifier v whether email is deliverable.
func verifyCall(v Verifier, email string) func(context.Context) (CallOutcome, error) {
	return func(ctx context.Context) (CallOutcome, error) {
		verdict, err := v.Verify(ctx, email)
		return callOutcome(err, err == nil && verdict.Deliverable())
	}
}

// callOutcome classifies a provider's answer: hit says it found (or
// accepted) the address.
func callOutcome(err error, hit bool) (CallOutcome, error) {
	switch {
	case err != nil:
		return CallFailed, err
	case hit:
		return CallFound, nil
	}
	return CallNotFound, nil
}

// call makes one guarded provider call for lead l, or explains why it made
// none. do performs the request and classifies the answer.
func (r *tickRun) call(ctx, stop context.Context, l store.ClaimedLead, provider string, do func(context.Context) (CallOutcome, error)) step {
	p := r.pairs.get(pairKey{l.WorkspaceID, provider})
	if s, held := r.remembered(provider, p); held {
		return s
	}
	leave, ok := p.enter(stop)
	if !ok {
		return step{kind: stepStopped}
	}
	defer leave()
	// While this lead waited for the slow-start slot, the call ahead of it
	// may have met the quota, a block or a refused key.
	if s, held := r.remembered(provider, p); held {
		return s
	}
	if stop.Err() != nil {
		return step{kind: stepStopped}
	}

	// Built only when there is something to say: most calls log nothing,
	// and With copies its attributes.
	log := func() *slog.Logger {
		return r.log.With("component", "waterfall", "provider", provider, "lead_id", l.LeadID, "workspace_id", l.WorkspaceID)
	}
	// The tick's deadline bounds the wait for a rate slot: a slot before it
	// is worth waiting for, one after it belongs to the next tick.
	deadline, _ := stop.Deadline()
	adm, s, ok := r.admit(ctx, Call{TickID: r.cfg.TickID, WorkspaceID: l.WorkspaceID, Provider: provider, LeadID: l.LeadID, WaitUntil: deadline}, p, log)
	if !ok {
		return s
	}

	// Admit may have waited for a token; meanwhile a call ahead of this one
	// may have met the quota or a refused key. Its breaker write may not be
	// committed yet, so the tick's own memory is the faster signal. A guard
	// block the tick remembers is not checked again: this admission is
	// newer than it, and skipping would waste the token.
	if s, held := r.unusable(provider, p); held {
		if err := r.cfg.Guard.Settle(context.WithoutCancel(ctx), adm, CallResult{Outcome: CallSkipped}); err != nil {
			log().Error("guard could not release the reservation", "error", err.Error())
		}
		return s
	}
	return r.invoke(ctx, provider, p, adm, do, log)
}

// admit asks the guard for the call; false means no call is made and the
// step says why.
func (r *tickRun) admit(ctx context.Context, call Call, p *pair, log func() *slog.Logger) (Admission, step, bool) {
	adm, err := r.cfg.Guard.Admit(ctx, call)
	if err == nil && adm.Allowed {
		// The common case: nothing to explain, no retry time to draw.
		r.rateWait.Add(int64(adm.Waited))
		return adm, step{}, true
	}
	s, ok := refusal(adm, err, ctx.Err() != nil, time.Now().Add(r.cfg.Backoff.Delay(1)))
	if err != nil {
		if s.kind == stepBlocked {
			log().Error("guard could not decide; no call made", "error", err.Error())
		}
		return adm, s, false
	}
	r.rateWait.Add(int64(adm.Waited))
	if !ok {
		p.block(adm.Until, adm.Reason)
		log().Warn("provider blocked by guard; no call made", "reason", adm.Reason,
			"retry_after_ms", time.Until(adm.Until).Milliseconds(), "is_transient", true, "duration_ms", 0)
	}
	return adm, s, ok
}

// refusal maps the guard's answer to the step of a call not made; true
// when the call may go out. A guard that could not decide blocks until
// retry, like a rate block; cancelled says the tick is stopping.
func refusal(adm Admission, err error, cancelled bool, retry time.Time) (step, bool) {
	switch {
	case err != nil && cancelled:
		return step{kind: stepStopped}, false
	case err != nil:
		return step{kind: stepBlocked, until: retry, reason: reasonGuardError}, false
	case !adm.Allowed:
		return step{kind: stepBlocked, until: adm.Until, reason: adm.Reason}, false
	}
	return step{}, true
}

// invoke makes an admitted call and settles it with the guard.
func (r *tickRun) invoke(ctx context.Context, provider string, p *pair, adm Admission, do func(context.Context) (CallOutcome, error), log func() *slog.Logger) step {
	start := time.Now()
	r.calls[provider].Add(1)
	outcome, err := do(ctx)
	took := time.Since(start)
	pe := asProviderError(ctx, provider, err)
	if pe != nil && pe.Kind == KindCancelled {
		// The tick cut the call: the guard learns nothing about the
		// provider, and the lead goes back as it was.
		outcome = CallCancelled
	}
	if pe != nil && pe.Kind == KindQuota {
		// Remember before settling: Settle is a database round trip, and
		// calls queued behind this one must not go out meanwhile.
		p.setQuota(pe)
	}
	if err := r.cfg.Guard.Settle(context.WithoutCancel(ctx), adm, CallResult{Outcome: outcome, Err: pe, Duration: took}); err != nil {
		log().Error("guard could not record the call", "error", err.Error())
	}
	if pe == nil {
		p.answered()
		return step{kind: stepAnswered, outcome: outcome}
	}
	if ctx.Err() != nil || pe.Kind == KindCancelled {
		return step{kind: stepStopped}
	}
	s := failedStep(pe)
	attrs := []any{"kind", string(pe.Kind), "retry_after_ms", pe.RetryAfter.Milliseconds(),
		"is_transient", pe.Transient(), "duration_ms", took.Milliseconds(), "error", pe.Error()}
	if s.kind == stepUnusable {
		r.disable(pe, log(), attrs)
	} else {
		log().Warn(failureMessage[s.kind], attrs...)
	}
	return s
}

// asProviderError is a call's error as the waterfall reads it. Adapters
// promise *ProviderError; anything else is the tick's cancellation when
// ctx is done, else an outage, never the lead's failure.
func asProviderError(ctx context.Context, provider string, err error) *ProviderError {
	if err == nil {
		return nil
	}
	if pe, ok := AsProviderError(err); ok {
		return pe
	}
	if ctx.Err() != nil {
		return CancelledByTick(ctx, provider)
	}
	return &ProviderError{Provider: provider, Kind: KindUnavailable, Message: err.Error(), Err: err}
}

// failedStep is what a provider's error means for the lead's waterfall.
func failedStep(pe *ProviderError) step {
	s := step{err: pe, called: true}
	switch pe.Kind {
	case KindQuota:
		s.kind = stepQuota
	case KindAuth:
		s.kind = stepUnusable
	case KindInvalidLead:
		s.kind, s.outcome = stepAnswered, CallNotFound
	default:
		s.kind = stepFailed
	}
	return s
}

// failureMessage is the waterfall's log line for a failed call's step;
// a refused key is said once by disable.
var failureMessage = map[stepKind]string{
	stepQuota:    "provider quota exhausted; no more calls to it for this workspace in this tick",
	stepAnswered: "provider rejected the lead's input",
	stepFailed:   "provider call failed transiently",
}

// remembered answers from what the tick already knows: a refused key, the
// pair's quota answer, or a guard block that still holds. No call is made.
func (r *tickRun) remembered(provider string, p *pair) (step, bool) {
	if s, held := r.unusable(provider, p); held {
		return s, true
	}
	if until, reason, ok := p.blocked(time.Now()); ok {
		return step{kind: stepBlocked, until: until, reason: reason}, true
	}
	return step{}, false
}

// unusable reports a refused key or the pair's quota answer: for the rest
// of the tick no admission changes them.
func (r *tickRun) unusable(provider string, p *pair) (step, bool) {
	if pe := r.disabledBy(provider); pe != nil {
		return step{kind: stepUnusable, err: pe}, true
	}
	if pe := p.exhausted(); pe != nil {
		return step{kind: stepQuota, err: pe}, true
	}
	return step{}, false
}

// disabledBy returns the auth error that disabled provider in this tick.
func (r *tickRun) disabledBy(provider string) *ProviderError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.disabled[provider]
}

// disable stops using a provider whose credentials were refused, for the
// rest of the tick and every workspace (keys are per provider), and says so
// once at error level: an operator must fix the key.
func (r *tickRun) disable(pe *ProviderError, log *slog.Logger, attrs []any) {
	r.mu.Lock()
	first := r.disabled[pe.Provider] == nil
	if first {
		r.disabled[pe.Provider] = pe
	}
	r.mu.Unlock()
	if first {
		log.Error("provider refused our credentials; not used for the rest of this tick (check RINDA_"+strings.ToUpper(pe.Provider)+"_API_KEY)", attrs...)
	}
}
