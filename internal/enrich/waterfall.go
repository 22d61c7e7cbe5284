package enrich

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/faults"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

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
	if lr.called || (lr.verify != nil && lr.verify.called) {
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

// waterfall verifies the address the lead already holds, if any, then
// tries the finders that have not answered it yet, in order, each found
// address through the verifier when there is one, and gathers what they
// met; false when the tick stopped first (the lead goes back untouched).
func (r *tickRun) waterfall(ctx, stop context.Context, l store.ClaimedLead, person Lead) (leadResult, bool) {
	lr := leadResult{missed: slices.Clone(l.MissedBy), doubted: slices.Clone(l.DoubtedBy)}
	forgetBoughtFault(&l, &lr)
	if l.FoundEmail != "" {
		// Bought earlier, not verified yet: verify it, ask no finder for it.
		if done, ok := r.verify(ctx, stop, l, &lr, l.FoundEmail, l.FoundBy); !ok || done {
			return lr, ok
		}
	}
	for _, host := range r.cfg.Finders {
		f, own, usable := r.finderFor(l.WorkspaceID, host.Name())
		ask, again := r.asks(l, &lr, host.Name())
		if !usable || !ask {
			continue // no key for it here, or it answered this lead already (maybe lost, and not asked again yet)
		}
		var found Finding
		s := r.call(ctx, stop, l, f.Name(), own, again, findCall(f, person, &found))
		lr.answeredAgain(f.Name(), again, s)
		switch {
		case s.kind == stepStopped:
			return lr, false
		case s.kind == stepDoubted:
			// Cut with its request out: maybe billed, the answer lost.
			lr.doubtNow(f.Name())
			return lr, true
		case s.kind != stepAnswered || s.outcome != CallFound:
			lr.add(f.Name(), s)
			if parkFault(&lr, f.Name(), s) {
				return lr, true
			}
			continue
		}
		if done, ok := r.verify(ctx, stop, l, &lr, found.Email, f.Name()); !ok || done {
			return lr, ok
		}
	}
	return lr, true
}

// asks reports whether finder is asked for lead l: not when it answered
// already, nor when its answer was lost (in doubt) until the in-doubt wait
// is over; again says it is asked after such a loss.
func (r *tickRun) asks(l store.ClaimedLead, lr *leadResult, finder string) (ask, again bool) {
	switch {
	case slices.Contains(lr.missed, finder):
		return false, false
	case slices.Contains(lr.doubted, finder):
		return r.retryDoubt(l, finder), true
	}
	return true, false
}

// answeredAgain takes finder out of the lead's finders in doubt when it was
// asked again (again) and this time answered.
func (lr *leadResult) answeredAgain(finder string, again bool, s step) {
	if again && s.answered() {
		lr.doubted = slices.DeleteFunc(lr.doubted, func(p string) bool { return p == finder })
	}
}

// forgetBoughtFault is the invariant harness's broken build BoughtTwice
// (internal/faults; a no-op elsewhere): the lead's waterfall forgets the
// address an earlier attempt bought and the finders in doubt.
func forgetBoughtFault(l *store.ClaimedLead, lr *leadResult) {
	if faults.On(faults.BoughtTwice) {
		l.FoundEmail, lr.doubted = "", nil
	}
}

// parkFault is the invariant harness's broken build ParkedWhileServable
// (internal/faults; false elsewhere): a finder out or blocked ends the
// waterfall and parks the lead, the finders after it unasked.
func parkFault(lr *leadResult, provider string, s step) bool {
	if (s.kind == stepQuota || s.kind == stepBlocked) && faults.On(faults.ParkedWhileServable) {
		lr.quota = &ProviderError{Provider: provider, Kind: KindQuota, Message: "fault: parked"}
		return true
	}
	return false
}

// verify judges address, found by foundBy, with the verifier, if any. done
// says the lead's waterfall is over: the address is accepted, or kept to
// wait for the verifier (no finder can help without it); otherwise it was
// undeliverable, counted as foundBy's miss. ok is false when the tick
// stopped first.
func (r *tickRun) verify(ctx, stop context.Context, l store.ClaimedLead, lr *leadResult, address, foundBy string) (done, ok bool) {
	v, own, keyless := r.verifierFor(l.WorkspaceID)
	if v == nil {
		lr.email, lr.foundBy = address, foundBy
		return true, true
	}
	var vs step
	if keyless != nil {
		vs = step{kind: stepUnusable, err: keyless}
	} else {
		vs = r.call(ctx, stop, l, v.Name(), own, false, verifyCall(v, address))
	}
	switch {
	case vs.kind == stepStopped || vs.kind == stepDoubted:
		// A verdict lost is not a verifier's doubt about the lead: the
		// address stays held (the guard kept it when it was billed).
		return false, false
	case vs.kind == stepAnswered && vs.outcome == CallFound:
		lr.email, lr.foundBy = address, foundBy
		return true, true
	case vs.kind == stepAnswered:
		lr.miss(foundBy)
		return false, true
	}
	lr.held, lr.heldBy, lr.verify = address, foundBy, &leadResult{}
	lr.verify.add(v.Name(), vs)
	return true, true
}

// callFunc performs one provider request and classifies its answer; found
// is the address a finder found ("" otherwise).
type callFunc func(context.Context) (outcome CallOutcome, found string, err error)

// findCall asks finder f for lead's address, kept in found.
func findCall(f Finder, lead Lead, found *Finding) callFunc {
	return func(ctx context.Context) (CallOutcome, string, error) {
		var err error
		*found, err = f.FindEmail(ctx, lead)
		if err == nil && found.Found {
			// Stored in its canonical spelling, like an imported address; an
			// address that has none (a bidi control, a bad domain) is no find.
			canonical, cerr := address.Canonical(found.Email)
			found.Email, found.Found = canonical, cerr == nil
		}
		outcome, err := callOutcome(err, err == nil && found.Found)
		if outcome != CallFound {
			return outcome, "", err
		}
		return outcome, found.Email, err
	}
}

// verifyCall asks verifier v whether email is deliverable.
func verifyCall(v Verifier, email string) callFunc {
	return func(ctx context.Context) (CallOutcome, string, error) {
		verdict, err := v.Verify(ctx, email)
		outcome, err := callOutcome(err, err == nil && verdict.Deliverable())
		return outcome, "", err
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
// none. do performs the request and classifies the answer. again marks a
// finder asked again after its answer for the lead was lost: a possible
// second charge, recorded as such in the ledger.
func (r *tickRun) call(ctx, stop context.Context, l store.ClaimedLead, provider string, own, again bool, do callFunc) step {
	p := r.pairs.get(pairKey{l.WorkspaceID, provider})
	account := Account(provider, l.WorkspaceID, own)
	if s, held := r.remembered(account, p); held {
		return s
	}
	leave, ok := p.enter(stop)
	if !ok {
		return step{kind: stepStopped}
	}
	defer leave()
	// While this lead waited for the slow-start slot, the call ahead of it
	// may have met the quota, a block or a refused key.
	if s, held := r.remembered(account, p); held {
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
	adm, s, ok := r.admit(ctx, Call{TickID: r.cfg.TickID, WorkspaceID: l.WorkspaceID, Provider: provider, LeadID: l.LeadID, WaitUntil: deadline, OwnKey: own, SecondCharge: again}, p, log)
	if !ok {
		return s
	}
	if ctx.Err() != nil {
		// Signalled while admitted: a stop ends new calls, not answers.
		r.skip(ctx, adm, log)
		return step{kind: stepStopped}
	}
	if again && !r.markSecondCharge(ctx, adm, log) {
		r.skip(ctx, adm, log)
		return step{kind: stepBlocked, until: time.Now().Add(r.cfg.Backoff.Delay(1)), reason: reasonGuardError}
	}

	// Admit may have waited for a token; meanwhile a call ahead of this one
	// may have met the quota or a refused key. Its breaker write may not be
	// committed yet, so the tick's own memory is the faster signal. A guard
	// block the tick remembers is not checked again: this admission is
	// newer than it, and skipping would waste the token.
	if s, held := r.unusable(account, p); held {
		r.skip(ctx, adm, log)
		return s
	}
	return r.invoke(ctx, provider, account, p, adm, do, log)
}

// skip gives back an admission whose call is not made.
func (r *tickRun) skip(ctx context.Context, adm Admission, log func() *slog.Logger) {
	if err := r.cfg.Guard.Settle(context.WithoutCancel(ctx), adm, CallResult{Outcome: CallSkipped}); err != nil {
		log().Error("guard could not release the reservation", "error", err.Error())
	}
}

// markSecondCharge records in the guard's ledger, before the call goes
// out, that it may bill a find a second time; false when it could not
// (the call is not made: unrecorded, it would be a charge nobody sees).
func (r *tickRun) markSecondCharge(ctx context.Context, adm Admission, log func() *slog.Logger) bool {
	m, ok := r.cfg.Guard.(SecondChargeMarker)
	if !ok {
		return true
	}
	if err := m.MarkSecondCharge(context.WithoutCancel(ctx), adm); err != nil {
		log().Error("guard could not record the call as a possible second charge; no call made", "error", err.Error())
		return false
	}
	return true
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
		p.block(s)
		b := block{provider: call.Provider}
		b.earlier(call.Provider, s)
		log().Warn("provider blocked by guard; no call made", "reason", adm.Reason, "cause", b.text(),
			"retry_after_ms", time.Until(adm.Until).Milliseconds(), "is_transient", waits(s, time.Now()), "duration_ms", 0)
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
		return step{kind: stepBlocked, until: adm.Until, reason: adm.Reason, cause: adm.Cause, retryAfter: adm.RetryAfter}, false
	}
	return step{}, true
}

// invoke makes an admitted call and settles it with the guard.
func (r *tickRun) invoke(ctx context.Context, provider, account string, p *pair, adm Admission, do callFunc, log func() *slog.Logger) step {
	start := time.Now()
	r.calls[provider].Add(1)
	// The request runs under inflight, not ctx: an answer on its way when
	// the tick is stopped is paid for, and kept.
	var sent atomic.Bool
	rctx := httptrace.WithClientTrace(r.inflight, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { sent.Store(true) },
	})
	outcome, found, err := do(rctx)
	took := time.Since(start)
	pe := asProviderError(r.inflight, provider, err)
	outcome = cutOutcome(outcome, pe, sent.Load(), ctx.Err() != nil)
	if pe != nil && pe.Kind == KindQuota {
		// Remember before settling: Settle is a database round trip, and
		// calls queued behind this one must not go out meanwhile.
		p.setQuota(pe)
	}
	r.settle(ctx, adm, CallResult{Outcome: outcome, Err: pe, Duration: took, Found: found}, log)
	if pe == nil {
		p.answered()
		return step{kind: stepAnswered, outcome: outcome}
	}
	if outcome == CallInDoubt {
		return step{kind: stepDoubted}
	}
	if r.inflight.Err() != nil || pe.Kind == KindCancelled {
		return step{kind: stepStopped}
	}
	s := failedStep(pe)
	attrs := []any{"kind", string(pe.Kind), "retry_after_ms", pe.RetryAfter.Milliseconds(),
		"is_transient", pe.Transient(), "duration_ms", took.Milliseconds(), "error", pe.Error()}
	if s.kind == stepUnusable {
		r.disable(account, pe, log(), attrs)
	} else {
		log().Warn(failureMessage[s.kind], attrs...)
	}
	return s
}

// Settle retries while the database is away: from the first retry's wait
// up to settleRetryMax, doubling.
const (
	settleRetryFirst = 100 * time.Millisecond
	settleRetryMax   = 2 * time.Second
)

// settle records a call that was made with the guard. A paid answer must
// not be lost to a database that is away for a moment (a restart, a
// failover): a failed settle is tried again until the tick's deadline
// (ctx's, which ends before the lead's lease), whether or not the tick is
// stopping meanwhile. A settle never made leaves the call reserved in the
// ledger; the tick that takes the lead over settles it in doubt and sends
// the lead to that finder no more (doubt).
func (r *tickRun) settle(ctx context.Context, adm Admission, res CallResult, log func() *slog.Logger) {
	sctx := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		sctx, cancel = context.WithDeadline(sctx, deadline)
		defer cancel()
	}
	for attempt := 1; ; attempt++ {
		err := r.cfg.Guard.Settle(sctx, adm, res)
		if err == nil {
			return
		}
		log().Error("guard could not record the call", "error", err.Error(), "attempt", attempt, "outcome", string(res.Outcome))
		if tick.Sleep(sctx, tick.Backoff(attempt, settleRetryFirst, settleRetryMax)) != nil {
			log().Error("the call stays unsettled: the tick's deadline passed; the tick that takes the lead over will not send it to this provider again",
				"outcome", string(res.Outcome))
			return
		}
	}
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

// remembered answers from what the tick already knows: a refused key of
// the account, the pair's quota answer, or a guard block that still holds.
// No call is made.
func (r *tickRun) remembered(account string, p *pair) (step, bool) {
	if s, held := r.unusable(account, p); held {
		return s, true
	}
	if s, ok := p.blocked(time.Now()); ok {
		return s, true
	}
	return step{}, false
}

// unusable reports a refused key of the account or the pair's quota
// answer: for the rest of the tick no admission changes them.
func (r *tickRun) unusable(account string, p *pair) (step, bool) {
	if pe := r.disabledBy(account); pe != nil {
		return step{kind: stepUnusable, err: pe}, true
	}
	if pe := p.exhausted(); pe != nil {
		return step{kind: stepQuota, err: pe}, true
	}
	return step{}, false
}

// disabledBy returns the auth error that disabled account in this tick.
func (r *tickRun) disabledBy(account string) *ProviderError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.disabled[account]
}

// disable stops using an account whose key was refused, for the rest of
// the tick (the host's key serves every workspace without one of its own),
// and says so once at error level: an operator must fix the key.
func (r *tickRun) disable(account string, pe *ProviderError, log *slog.Logger, attrs []any) {
	r.mu.Lock()
	first := r.disabled[account] == nil
	if first {
		r.disabled[account] = pe
	}
	r.mu.Unlock()
	if !first {
		return
	}
	fix := "check " + strings.ToUpper("RINDA_"+pe.Provider+"_API_KEY")
	if account != pe.Provider {
		fix = "set the workspace's key again with 'rindactl workspace set-key'"
	}
	log.Error("provider refused our credentials; not used for the rest of this tick ("+fix+")", attrs...)
}

// cutOutcome is how a call the tick cut settles: the guard learns nothing
// about the provider from it. Never sent, it is refunded and the lead
// goes back as it was; sent, the provider may have billed it: in doubt.
// After a stop (stopping), a call that met its own timeout is the rest
// the stop waited for in vain: in doubt too, not the provider's failure.
func cutOutcome(outcome CallOutcome, pe *ProviderError, sent, stopping bool) CallOutcome {
	switch {
	case pe == nil:
		return outcome
	case pe.Kind == KindCancelled && sent:
		return CallInDoubt
	case pe.Kind == KindCancelled:
		return CallCancelled
	case stopping && sent && pe.Kind == KindUnavailable && errors.Is(pe, context.DeadlineExceeded):
		return CallInDoubt
	}
	return outcome
}
