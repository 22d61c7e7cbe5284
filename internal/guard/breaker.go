package guard

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/store"
)

// Breaker gate answers of the admit statement.
const (
	breakerClosed = "closed"
	breakerProbe  = "probe"
	breakerOpen   = "open"
)

// probeOwner names a call as the holder of a half-open probe. A lead is
// worked by one goroutine of one tick at a time, so tick and lead identify
// the call; Settle derives the same name to close the breaker.
func probeOwner(call enrich.Call) string {
	return fmt.Sprintf("%s/%d/%d", call.TickID, call.WorkspaceID, call.LeadID)
}

// breakerRefusal fills a refused admission from the breaker: until when
// the caller may try again (the breaker's end, or, once it has expired and
// another caller holds the probe, the probe's) and what opened it.
func breakerRefusal(adm *enrich.Admission, row store.GuardAdmitRow, probeLease time.Duration) {
	adm.Reason = ReasonBreakerOpen
	if row.OpenUntil != nil && row.OpenUntil.After(row.Now) {
		adm.Until = *row.OpenUntil
		if row.Reason != nil {
			adm.Cause = *row.Reason
		}
		if row.RetryAfter != nil {
			adm.RetryAfter = *row.RetryAfter
		}
		return
	}
	adm.Cause = enrich.CauseProbe
	if row.ProbeUntil != nil && row.ProbeUntil.After(row.Now) {
		adm.Until = *row.ProbeUntil
		return
	}
	// Another caller claimed the probe in the same instant.
	adm.Until = row.Now.Add(probeLease)
}

// answered reports whether the provider gave a proper answer, which ends a
// failure streak: a result, or a rejection of the lead itself.
func answered(res enrich.CallResult) bool {
	return res.Outcome != enrich.CallFailed || (res.Err != nil && res.Err.Kind == enrich.KindInvalidLead)
}

// updateBreaker applies a call's result to its breaker. Each write is one
// statement that also writes the change's events; the first kind named is
// the episode's one Slack alert (the most specific: quota or auth).
func (g *Guard) updateBreaker(ctx context.Context, a enrich.Admission, res enrich.CallResult) error {
	call := a.Call
	if answered(res) {
		if !a.Probe {
			return nil // the settle statement already cleared the streak
		}
		_, err := store.BreakerClose(ctx, g.db, store.BreakerCloseArgs{WorkspaceID: call.WorkspaceID, Provider: call.Provider, ProbeOwner: probeOwner(call), Reason: "probe succeeded"})
		return err
	}
	kind := enrich.KindUnavailable
	if res.Err != nil {
		kind = res.Err.Kind
	}
	switch kind {
	case enrich.KindQuota:
		_, _, err := store.BreakerTrip(ctx, g.db, store.BreakerTripArgs{WorkspaceID: call.WorkspaceID, Provider: call.Provider,
			OpenFor: g.quotaWindow(res.Err), Reason: string(kind), Kinds: []string{events.KindQuotaExhausted, events.KindBreakerOpened}, RetryAfter: res.Err.RetryAfter})
		return err
	case enrich.KindAuth:
		_, _, err := store.BreakerTrip(ctx, g.db, store.BreakerTripArgs{WorkspaceID: call.WorkspaceID, Provider: call.Provider,
			OpenFor: g.cfg.AuthOpen, Reason: string(kind), Kinds: []string{events.KindAuthFailed, events.KindBreakerOpened}})
		return err
	}
	window, retryAfter := g.cfg.TransientOpen, time.Duration(0)
	if res.Err != nil {
		retryAfter = min(res.Err.RetryAfter, maxOpen)
		window = max(window, retryAfter)
	}
	if a.Probe {
		// A failed probe re-opens at once; the episode (and its alert)
		// stays the same.
		_, _, err := store.BreakerTrip(ctx, g.db, store.BreakerTripArgs{WorkspaceID: call.WorkspaceID, Provider: call.Provider,
			OpenFor: window, Reason: string(kind), Kinds: []string{events.KindBreakerOpened}, RetryAfter: retryAfter})
		return err
	}
	_, _, err := store.BreakerFailure(ctx, g.db, store.BreakerFailureArgs{WorkspaceID: call.WorkspaceID, Provider: call.Provider,
		Threshold: g.cfg.FailureThreshold, OpenFor: window, Reason: string(kind), RetryAfter: retryAfter})
	return err
}

// quotaWindow is max(QuotaOpen, Retry-After, time to the provider's reset).
func (g *Guard) quotaWindow(pe *enrich.ProviderError) time.Duration {
	w := g.cfg.QuotaOpen
	if pe == nil {
		return w
	}
	w = max(w, pe.RetryAfter)
	if !pe.ResetAt.IsZero() {
		w = max(w, time.Until(pe.ResetAt))
	}
	return min(w, maxOpen)
}

// OpenBreaker opens a breaker for an operator (e.g. a quota known to be
// gone) with exactly the given window and writes breaker_opened.
func OpenBreaker(ctx context.Context, db store.DBTX, workspaceID int64, provider string, openFor time.Duration, reason string) (until time.Time, err error) {
	_, until, err = store.BreakerTrip(ctx, db, store.BreakerTripArgs{WorkspaceID: workspaceID, Provider: provider,
		OpenFor: openFor, Reason: reason, Kinds: []string{events.KindBreakerOpened}, Exact: true})
	return until, err
}

// ResetBreaker closes a breaker now, whoever holds its probe, and writes
// breaker_closed. It reports whether there was anything to close.
func ResetBreaker(ctx context.Context, db store.DBTX, workspaceID int64, provider, reason string) (bool, error) {
	return store.BreakerClose(ctx, db, store.BreakerCloseArgs{WorkspaceID: workspaceID, Provider: provider, Reason: reason})
}
