package guard

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

// Reasons an Admission is refused, as the tick logs them.
const (
	ReasonBreakerOpen    = "breaker_open"
	ReasonRateLimited    = enrich.ReasonRateLimited
	ReasonCeilingReached = "ceiling_reached"
)

// settleTimeout bounds Settle's bookkeeping when the tick is shutting down.
const settleTimeout = 5 * time.Second

// Guard is the Postgres-backed enrich.Guard: Admit decides breaker, token
// and spend in one statement; Settle records the outcome, trips or closes
// the breaker and writes events in the same statement as the change.
//
// Calls of one workspace and provider that reach Admit (or Settle) while
// a statement of theirs is in flight share the next one (tick.Group): the
// rows every such call writes, the bucket and the month's spend, are then
// locked once per group, and a process queues at most one backend on them
// however many workers it runs. Each call still gets its own answer, as
// if admitted alone in arrival order, and only once it is committed.
type Guard struct {
	db      store.Batcher
	cfg     Config
	metrics *metrics.Metrics
	// admits and settles hold one tick.Group per pairGroup.
	admits  sync.Map
	settles sync.Map
}

var _ enrich.Guard = (*Guard)(nil)

// New returns a guard over db (a pool: Admit runs concurrently). m may be
// nil.
func New(db store.Batcher, cfg Config, m *metrics.Metrics) *Guard {
	return &Guard{db: db, cfg: cfg.withDefaults(), metrics: m}
}

// statementTimeout bounds a group's statement. It runs whatever the
// context of the call that leads it: the others' answers depend on it.
const statementTimeout = 30 * time.Second

// admitKey is what the calls admitted in one statement share.
type admitKey struct {
	workspace int64
	provider  string
	tick      string
	bucket    string
}

// admitGroup returns the group admitting calls with key k.
func (g *Guard) admitGroup(k admitKey, b bucket, lim providerspec.Limits) *tick.Group[store.GuardAdmitCall, store.GuardAdmitRow] {
	if grp, ok := g.admits.Load(k); ok {
		return grp.(*tick.Group[store.GuardAdmitCall, store.GuardAdmitRow])
	}
	p := store.GuardAdmitParams{
		WorkspaceID: k.workspace, Provider: k.provider, TickID: k.tick, ProbeLease: g.cfg.ProbeLease,
		BucketKey: b.key, Interval: b.interval, Tolerance: b.tolerance(), CostUSD: lim.CostUSD,
	}
	grp, _ := g.admits.LoadOrStore(k, tick.NewGroup(groupMax, func(calls []store.GuardAdmitCall) ([]store.GuardAdmitRow, error) {
		ctx, cancel := context.WithTimeout(context.Background(), statementTimeout)
		defer cancel()
		return store.GuardAdmit(ctx, g.db, p, calls)
	}))
	return grp.(*tick.Group[store.GuardAdmitCall, store.GuardAdmitRow])
}

// CeilingInFlightWait is how long a call refused at the ceiling waits when
// only calls in flight fill it (store.CeilingInFlightWait).
const CeilingInFlightWait = store.CeilingInFlightWait

// groupMax bounds the calls one statement carries.
const groupMax = 100

// Admit asks whether call may go out now. It makes one round trip, plus a
// sleep for the call's rate slot when that slot comes before call.WaitUntil
// (or, without one, within Config.MaxTokenWait).
func (g *Guard) Admit(ctx context.Context, call enrich.Call) (enrich.Admission, error) {
	if err := ctx.Err(); err != nil {
		return enrich.Admission{Call: call}, err
	}
	lim := g.cfg.Limits(call.Provider)
	maxWait := g.cfg.MaxTokenWait
	if !call.WaitUntil.IsZero() {
		maxWait = max(time.Until(call.WaitUntil), 0)
	}
	bucket := newBucket(call, lim, maxWait)
	grp := g.admitGroup(admitKey{call.WorkspaceID, call.Provider, call.TickID, bucket.key}, bucket, lim)
	row, err := grp.Do(store.GuardAdmitCall{LeadID: call.LeadID, ProbeOwner: probeOwner(call), Horizon: bucket.horizon()})
	if err != nil {
		return enrich.Admission{Call: call}, err
	}
	adm := enrich.Admission{Call: call, Probe: row.Breaker == breakerProbe}
	switch {
	case row.Breaker == breakerOpen:
		breakerRefusal(&adm, row, g.cfg.ProbeLease)
	case row.CallID != nil:
		adm.Allowed, adm.Ref = true, *row.CallID
	case row.CeilingInFlight:
		// Calls in flight hold the room: the refusal lasts until they
		// settle, not the month; a wait the lead is never parked for.
		adm.Reason, adm.Until = ReasonCeilingReached, row.Now.Add(CeilingInFlightWait)
	case !*row.UnderCeiling || bucket.key == "" || (row.Granted != nil && *row.Granted):
		adm.Reason, adm.Until = ReasonCeilingReached, row.NextMonth
	default:
		adm.Reason, adm.Until = ReasonRateLimited, bucket.due(row)
	}
	if !adm.Allowed {
		g.metrics.GuardBlocked(call.Provider, adm.Reason)
		if adm.Probe {
			// The probe was claimed but the call cannot go out: free it.
			adm.Probe = false
			return adm, store.BreakerReleaseProbe(context.WithoutCancel(ctx), g.db, call.WorkspaceID, call.Provider, probeOwner(call))
		}
		return adm, nil
	}
	waited, err := g.awaitSlot(ctx, bucket, row, adm)
	if err != nil {
		// The call will not be made: give the reservation back.
		_ = g.Settle(ctx, adm, enrich.CallResult{Outcome: enrich.CallSkipped})
		return enrich.Admission{Call: call}, err
	}
	adm.Waited = waited
	return adm, nil
}

// awaitSlot sleeps until the admitted call's rate slot. The ledger row
// says a call that waits for its slot was not made yet; it must say the
// call went out before it does (started_at), or a tick taking the lead
// over would refund a call that may have been billed.
func (g *Guard) awaitSlot(ctx context.Context, b bucket, row store.GuardAdmitRow, adm enrich.Admission) (time.Duration, error) {
	waited, err := b.wait(ctx, row)
	if err != nil || waited == 0 {
		return waited, err
	}
	started, err := store.GuardCallStarted(ctx, g.db, adm.Ref)
	if err == nil && !started {
		err = fmt.Errorf("%s call %d for lead %d: settled by another tick while waiting for its rate slot", adm.Call.Provider, adm.Ref, adm.Call.LeadID)
	}
	return waited, err
}

// settleKey is what the calls settled in one statement share.
type settleKey struct {
	workspace int64
	provider  string
}

// settle writes c to the ledger in the next settle statement of its
// workspace and provider.
func (g *Guard) settle(workspaceID int64, provider string, c store.GuardSettleCall) error {
	k := settleKey{workspaceID, provider}
	grp, ok := g.settles.Load(k)
	if !ok {
		grp, _ = g.settles.LoadOrStore(k, tick.NewGroup(groupMax, func(calls []store.GuardSettleCall) ([]struct{}, error) {
			ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
			defer cancel()
			return make([]struct{}, len(calls)), store.GuardSettle(ctx, g.db, workspaceID, provider, calls)
		}))
	}
	_, err := grp.(*tick.Group[store.GuardSettleCall, struct{}]).Do(c)
	return err
}

// Settle records how an admitted call ended: the ledger row is settled or
// refunded, a billed find is kept with its lead in the same statement, and
// the breaker learns about quota, auth and transient failures (or closes
// after a successful probe). A call the tick cut (CallCancelled) is
// refunded and teaches the breaker nothing. It may be called again after
// an error (the tick retries while its database is away): the ledger row
// is settled once (only a reserved row changes), and the breaker's lesson
// is repeated only if it was not learnt.
func (g *Guard) Settle(ctx context.Context, a enrich.Admission, res enrich.CallResult) error {
	if !a.Allowed {
		return nil
	}
	ctx, cancel := settleContext(ctx)
	defer cancel()
	call := a.Call
	if res.Outcome == enrich.CallCancelled {
		// Made, then cut by the tick: a request, but settled as never made.
		g.metrics.ProviderRequest(call.Provider, string(res.Outcome))
	}
	if res.Outcome == enrich.CallSkipped || res.Outcome == enrich.CallCancelled {
		// Never made, or cut by the tick: refund the reservation; the
		// breaker learns nothing, but a probe it held is freed for the
		// next caller.
		if err := g.settle(call.WorkspaceID, call.Provider, store.GuardSettleCall{CallID: a.Ref, State: ledgerRefunded, Outcome: string(res.Outcome)}); err != nil {
			return err
		}
		if a.Probe {
			return store.BreakerReleaseProbe(ctx, g.db, call.WorkspaceID, call.Provider, probeOwner(call))
		}
		return nil
	}
	if res.Outcome == enrich.CallInDoubt {
		return g.settleInDoubt(ctx, a)
	}
	lim := g.cfg.Limits(call.Provider)
	class := callClass(res)
	g.metrics.ProviderRequest(call.Provider, class)
	c := store.GuardSettleCall{CallID: a.Ref, State: ledgerState(res, lim), Outcome: class, Clean: answered(res)}
	if c.State == ledgerSettled && res.Found != "" {
		// Billed: the address is kept with its lead right away (a crash
		// before the tick records the lead must not lose what was paid).
		c.LeadID, c.Found = call.LeadID, res.Found
	}
	if err := g.settle(call.WorkspaceID, call.Provider, c); err != nil {
		return err
	}
	if err := g.updateBreaker(ctx, a, res); err != nil {
		return fmt.Errorf("%s breaker for workspace %d: %w", call.Provider, call.WorkspaceID, err)
	}
	return nil
}

// settleContext bounds Settle's bookkeeping by settleTimeout, or by the
// caller's deadline when that comes first: the tick's deadline ends before
// its leases do, so no settle lands after another tick took the lead.
// Cancellation does not stop it: a tick shutting down still records its
// calls.
func settleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(settleTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) && time.Until(d) > 0 {
		deadline = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// callClass names a call's result for the ledger and metrics: found,
// not_found, or the provider error kind.
func callClass(res enrich.CallResult) string {
	switch {
	case res.Outcome != enrich.CallFailed:
		return string(res.Outcome)
	case res.Err != nil:
		return string(res.Err.Kind)
	default:
		return string(enrich.KindUnavailable)
	}
}

// settleInDoubt keeps a call the tick cut after its request went out
// billed, outcome in_doubt: the provider may have charged for an answer
// the tick never read. The breaker learns nothing (the tick cut it), but
// a probe it held is freed.
func (g *Guard) settleInDoubt(ctx context.Context, a enrich.Admission) error {
	call := a.Call
	g.metrics.ProviderRequest(call.Provider, string(enrich.CallInDoubt))
	if err := g.settle(call.WorkspaceID, call.Provider, store.GuardSettleCall{CallID: a.Ref, State: ledgerSettled, Outcome: string(enrich.CallInDoubt)}); err != nil {
		return err
	}
	if a.Probe {
		return store.BreakerReleaseProbe(ctx, g.db, call.WorkspaceID, call.Provider, probeOwner(call))
	}
	return nil
}

// MarkSecondCharge records in the ledger that admitted call a may bill a
// find a second time (enrich.SecondChargeMarker).
func (g *Guard) MarkSecondCharge(ctx context.Context, a enrich.Admission) error {
	ctx, cancel := settleContext(ctx)
	defer cancel()
	return store.MarkSecondCharge(ctx, g.db, a.Ref)
}
