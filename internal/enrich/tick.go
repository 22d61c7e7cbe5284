package enrich

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Defaults for TickConfig, also the `enrich tick` flag defaults.
const (
	BatchDefault       = 200
	ConcurrencyDefault = 25
	// MaxDurationDefault leaves a cron minute room for start-up and records.
	MaxDurationDefault = 50 * time.Second
	// LeaseDefault must outlast MaxDuration plus CallTimeout, so a live
	// tick never loses its leads to another.
	LeaseDefault = 5 * time.Minute
	// CallTimeoutDefault is how long a call started before MaxDuration may
	// run past it: the providers' default HTTP timeout.
	CallTimeoutDefault = 20 * time.Second
	// NegativeCacheDefault is the memo's one-day wait after a quota answer,
	// after which the lead recovers by itself (billing cycles renew).
	NegativeCacheDefault = 24 * time.Hour
	// MaxAttemptsDefault is how many transiently failed attempts a lead gets
	// before it becomes enrichment_failed (only requeue revives it).
	MaxAttemptsDefault = 5
	// AuthRetryDefault is how long a lead waits when every provider left was
	// refused for its credentials: an operator must act first.
	AuthRetryDefault = 15 * time.Minute
)

// TickConfig configures one enrichment tick.
type TickConfig struct {
	// Finders are tried in order (the waterfall); at least one.
	Finders []Finder
	// Verifier, when set, checks each found address; an undeliverable one
	// counts as that finder's miss and the waterfall moves on.
	Verifier Verifier
	// OwnFinders and OwnVerifiers are the adapters of workspaces that have
	// their own API keys (by workspace id, then finder name): their calls
	// go through them, on their own token bucket and credits. Every other
	// workspace uses Finders and Verifier, the host's keys. The names are
	// the ones in Finders and Verifier.
	OwnFinders   map[int64]map[string]Finder
	OwnVerifiers map[int64]Verifier
	// Guard is consulted around every provider call; nil admits all.
	Guard       Guard
	Batch       int
	Concurrency int
	MaxDuration time.Duration
	// CallTimeout cuts a call still running CallTimeout after MaxDuration
	// (retries included), so Lease > MaxDuration + CallTimeout guarantees
	// no other tick takes a lead whose call is in flight.
	CallTimeout   time.Duration
	Lease         time.Duration
	NegativeCache time.Duration
	MaxAttempts   int
	// InDoubtRetryAfter is how long after a finder's answer for a lead was
	// lost (in doubt) that finder is asked again: 0 takes
	// InDoubtRetryDefault, InDoubtRetryOff never (requeue --refind).
	InDoubtRetryAfter time.Duration
	Backoff           Backoff
	// WorkspaceID limits the tick to one workspace; 0 works all.
	WorkspaceID int64
	// TickID names the tick (the lease holder); "" generates one.
	TickID string
	Logger *slog.Logger
}

func (c *TickConfig) setDefaults() {
	tick.Defaults(c, TickConfig{
		Guard: OpenGuard{}, Batch: BatchDefault, Concurrency: ConcurrencyDefault,
		MaxDuration: MaxDurationDefault, Lease: LeaseDefault, CallTimeout: CallTimeoutDefault,
		NegativeCache: NegativeCacheDefault, MaxAttempts: MaxAttemptsDefault,
		TickID: tick.NewID(), Logger: slog.New(slog.DiscardHandler),
	})
	// Not through Defaults, which reads a negative value as unset: here
	// it is InDoubtRetryOff.
	if c.InDoubtRetryAfter == 0 {
		c.InDoubtRetryAfter = InDoubtRetryDefault
	}
}

// RunTick runs one bounded enrichment tick: it claims due leads in rounds of
// Batch until none is due or MaxDuration has passed, works each through the
// provider waterfall with at most Concurrency in flight, records outcomes in
// grouped statements, and records the run in tick_runs. Cancelling ctx
// (SIGTERM) stops it like MaxDuration does: no new call goes out, the
// unstarted leads are released uncharged, and the calls in flight keep
// their answers (paid for) for up to CallTimeout, within the tick's
// deadline; the run is still recorded. Calls the tick cuts (that wait, its
// deadline, outcomes it can no longer record) are KindCancelled: the guard
// learns nothing from them, and settles them refunded when their request
// never left, in doubt (billed, the finder not asked again for the lead
// before InDoubtRetryAfter) when it did. An error means outcomes could not
// be claimed or recorded.
func RunTick(ctx context.Context, pool *pgxpool.Pool, cfg TickConfig) (Report, error) {
	cfg.setDefaults()
	if len(cfg.Finders) == 0 {
		return Report{}, errors.New("enrich tick: no finder configured")
	}
	started := time.Now()
	r := &tickRun{
		cfg:      cfg,
		log:      cfg.Logger.With("tick_id", cfg.TickID),
		calls:    map[string]*atomic.Int64{},
		disabled: map[string]*ProviderError{},
	}
	for _, f := range cfg.Finders {
		r.calls[f.Name()] = &atomic.Int64{}
	}
	if err := r.dropUnconfigured(); err != nil {
		return Report{}, err
	}
	if cfg.Verifier != nil {
		r.calls[cfg.Verifier.Name()] = &atomic.Int64{}
	}

	var rep Report
	ran, runErr := tick.Run(ctx, pool, tick.Spec{Kind: tickkind.Enrich, ID: cfg.TickID}, func(ctx context.Context, runStarted time.Time) tick.Outcome {
		claimed, unrecorded, err := r.drain(ctx, pool, runStarted, started)
		rep = r.report(claimed, started)
		// A stop between two calls is clean; outcomes it could not
		// record are not.
		return tick.Outcome{Claimed: claimed, Counts: rep.Outcomes.Map(), Err: err, Unsettled: unrecorded}
	})
	if !ran {
		if runErr != nil {
			return Report{}, runErr // no start recorded: nothing to report
		}
		return r.report(0, started), nil
	}
	level := slog.LevelInfo
	if runErr != nil {
		level = slog.LevelError
	}
	r.log.Log(context.WithoutCancel(ctx), level, "enrich tick finished", "component", "tick",
		"claimed", rep.Claimed, "enriched", rep.Outcomes.Enriched, "not_found", rep.Outcomes.NotFound,
		"pending", rep.Outcomes.Pending, "unreachable", rep.Outcomes.Unreachable,
		"enrichment_failed", rep.Outcomes.EnrichmentFailed, "provider_calls", rep.ProviderCalls,
		"lost", rep.Lost, "duration_ms", rep.DurationMS, "rate_wait_ms", rep.RateWaitMS, "error", errText(runErr))
	return rep, runErr
}

// drain claims and calls until the tick's end and closes the outcome
// writer; unrecorded says outcomes could not be recorded.
func (r *tickRun) drain(ctx context.Context, pool *pgxpool.Pool, runStarted, started time.Time) (claimed int, unrecorded bool, runErr error) {
	// Once outcomes cannot be recorded (the database is gone), calls in
	// flight would be paid for and lost: the tick cuts them, with that
	// cause, as it does on SIGTERM.
	work, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	r.out = tick.NewBatcher(ctx, tick.BatchSizeDefault, tick.BatchEveryDefault,
		func(ctx context.Context, outs []store.EnrichOutcome) error {
			n, err := store.RecordEnrichment(ctx, pool, r.cfg.TickID, outs)
			if err != nil {
				abort(fmt.Errorf("outcomes cannot be recorded: %w", err))
				return err
			}
			if lost := len(outs) - n; lost > 0 {
				r.lost.Add(int64(lost))
				r.log.Warn("outcomes not recorded: another tick took over their leases",
					"component", "tick", "lost", lost)
			}
			return nil
		})

	inflight, cutInflight := r.inflightContext(ctx, work, started)
	defer cutInflight()
	r.inflight = inflight
	claimed, runErr = r.loop(work, pool, runStarted)
	if err := r.out.Close(); err != nil {
		unrecorded = true
		if runErr == nil {
			// One line for the operator: what failed, what happens to the
			// leads, and the database's own reason.
			runErr = fmt.Errorf("recording enrichment outcomes failed; unrecorded leads return to the queue when their lease ends (%s): %w", r.cfg.Lease, err)
		}
	}
	return claimed, unrecorded, runErr
}

// tickRun is one tick's working state.
type tickRun struct {
	cfg   TickConfig
	log   *slog.Logger
	pairs pairs
	// calls counts requests per provider; the map itself is read-only.
	calls map[string]*atomic.Int64
	out   *tick.Batcher[store.EnrichOutcome]
	lost  atomic.Int64
	// rateWait sums the time calls waited for their rate slots.
	rateWait atomic.Int64
	// inflight is the context provider requests run under: not the tick's
	// (a SIGTERM stops new calls, not answers on their way), but cut at the
	// tick's deadline, CallTimeout after a stop, or at once when outcomes
	// cannot be recorded.
	inflight context.Context

	mu       sync.Mutex
	outcomes Outcomes
	// disabled accounts (Account keys) answered with an auth error:
	// unusable this tick.
	disabled map[string]*ProviderError
	// hostFinders are the finders usable with the host's keys, by name;
	// hostVerifierErr is set when the host has no key for the verifier.
	hostFinders     map[string]Finder
	hostVerifierErr *ProviderError
}

// loop claims rounds until nothing is due, the duration is up, ctx ends, or
// outcomes cannot be recorded. It returns how many leads it claimed.
func (r *tickRun) loop(ctx context.Context, pool *pgxpool.Pool, tickStarted time.Time) (int, error) {
	stop, cancel := context.WithTimeout(ctx, r.cfg.MaxDuration)
	defer cancel()
	// A call in flight at MaxDuration may finish, but not outlive the
	// lease: it is cut CallTimeout later and its lead released.
	calls, cancelCalls := context.WithTimeoutCause(ctx, r.cfg.MaxDuration+r.cfg.CallTimeout,
		fmt.Errorf("the tick's deadline passed (--max-duration %s plus the call timeout %s)", r.cfg.MaxDuration, r.cfg.CallTimeout))
	defer cancelCalls()
	claimed := 0
	// One claim runs ahead while the current batch is worked, so the
	// database's claim time overlaps the provider calls instead of adding
	// to them. A batch claimed just before the tick stops is released
	// uncharged by work(), like any lead not started.
	type claimResult struct {
		leads []store.ClaimedLead
		err   error
	}
	// after is the latest due time of the last batch: the next claim reads
	// the claim index from there, past the entries claimed rows left dead.
	claim := func(after time.Time) <-chan claimResult {
		ch := make(chan claimResult, 1)
		go func() {
			// Never cancelled mid-statement: a claim committed but not read
			// would strand its leads until their lease runs out.
			leads, err := store.ClaimEnrichment(context.WithoutCancel(stop), pool, store.EnrichClaim{
				TickID: r.cfg.TickID, Batch: r.cfg.Batch, Lease: r.cfg.Lease,
				WorkspaceID: r.cfg.WorkspaceID, TickStarted: tickStarted, After: after,
			})
			if err == nil {
				err = r.doubt(context.WithoutCancel(stop), pool, leads)
			}
			ch <- claimResult{leads, err}
		}()
		return ch
	}
	// Concurrency workers serve the whole tick: a batch's last slow lead
	// does not hold up the next batch, and each worker's stack, grown once
	// by the waterfall, is reused rather than grown again per lead.
	if stop.Err() != nil {
		// Stopped before the first claim: claiming a batch only to release
		// it would take leases other ticks could use.
		return 0, nil
	}
	leads := make(chan store.ClaimedLead)
	var workers sync.WaitGroup
	for range r.cfg.Concurrency {
		workers.Go(func() {
			for l := range leads {
				r.work(calls, stop, l)
			}
		})
	}
	defer workers.Wait()
	defer close(leads)
	next := claim(time.Time{})
	for {
		got := <-next
		if got.err != nil {
			return claimed, got.err
		}
		claimed += len(got.leads)
		if r.out.Err() != nil {
			// Outcomes can no longer be recorded: calls for this batch would
			// be paid for and lost. Its leases bring the leads back.
			return claimed, nil
		}
		// A short batch means nothing more is due.
		more := len(got.leads) == r.cfg.Batch && stop.Err() == nil && r.out.Err() == nil
		if more {
			next = claim(latestDue(got.leads))
		}
		for _, l := range got.leads {
			leads <- l
		}
		if !more {
			return claimed, nil
		}
	}
}

// doubt settles in doubt the calls whose answer a tick lost: for leads
// taken over from a tick that never recorded them (its lease ran out: it
// was killed, or lost its database, maybe between a finder's paid answer
// and its record), the calls it admitted and never settled are billed,
// and their finders join the lead's doubted_by, so the lead is not sent to
// them again (a find is not bought twice) until InDoubtRetryAfter has
// passed, or an operator asks with `requeue --refind`.
func (r *tickRun) doubt(ctx context.Context, pool *pgxpool.Pool, leads []store.ClaimedLead) error {
	var ids []int64
	for _, l := range leads {
		if l.PrevStatus == lead.InProgress {
			ids = append(ids, l.LeadID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	finders := make([]string, len(r.cfg.Finders))
	for i, f := range r.cfg.Finders {
		finders[i] = f.Name()
	}
	doubted, err := store.DoubtEnrichment(ctx, pool, r.cfg.TickID, finders, ids)
	if err != nil {
		return err
	}
	for i, l := range leads {
		if d, ok := doubted[l.LeadID]; ok {
			leads[i].DoubtedBy, leads[i].DoubtedAt = d.By, d.At
			r.log.Warn("a finder's answer for the lead was lost with an earlier tick; the find may have been billed, so the lead is not sent to it again before "+InDoubtRetryEnv+" ('rindactl requeue --refind' asks at once)",
				"component", "tick", "lead_id", l.LeadID, "workspace_id", l.WorkspaceID, "doubted_by", d.By)
		}
	}
	return nil
}

// latestDue is the latest due time among leads before their claim.
func latestDue(leads []store.ClaimedLead) time.Time {
	var latest time.Time
	for _, l := range leads {
		if l.PrevDue.After(latest) {
			latest = l.PrevDue
		}
	}
	return latest
}

// dropUnconfigured leaves out the host's finders that cannot work on this
// host (no API key), saying so once each; nothing shared is written for
// them. A workspace with its own key for such a finder still uses it. With
// no finder usable for anyone, or an unusable verifier and no workspace
// with its own (no address could be accepted), the tick cannot run at all.
func (r *tickRun) dropUnconfigured() error {
	if v := r.cfg.Verifier; v != nil {
		if err := configError(v); err != nil {
			if !r.ownAny(v.Name()) {
				return &ConfigError{fmt.Errorf("verifier %s is not usable: %w", v.Name(), err)}
			}
			// Workspaces without their own key cannot verify: their finds
			// wait, kept, for a key.
			r.hostVerifierErr = &ProviderError{Provider: v.Name(), Kind: KindAuth, Message: err.Error()}
		}
	}
	host, missing, err := UsableFinders(r.cfg.Finders, r.ownAny)
	if err != nil {
		return err
	}
	r.hostFinders = host
	for _, m := range missing {
		r.log.Error("provider skipped in this tick: "+m, "component", "tick")
	}
	return nil
}

// UsableFinders splits finders into the host's usable ones, by name, and
// why the others cannot work on this host (no API key); own reports a
// provider some workspace has its own key for, which stays usable for it.
// With no finder usable for anyone the tick cannot run: err is its
// *ConfigError, which doctor reports before a unit meets it.
func UsableFinders(finders []Finder, own func(provider string) bool) (host map[string]Finder, missing []string, err error) {
	host = map[string]Finder{}
	for _, f := range finders {
		if err := configError(f); err != nil {
			if !own(f.Name()) {
				missing = append(missing, err.Error())
			}
			continue
		}
		host[f.Name()] = f
	}
	usable := 0
	for _, f := range finders {
		if host[f.Name()] != nil || own(f.Name()) {
			usable++
		}
	}
	if usable == 0 {
		return nil, missing, &ConfigError{fmt.Errorf("no finder is usable on this host: %s", strings.Join(missing, "; "))}
	}
	return host, missing, nil
}

// ownAny reports whether some workspace has its own key for provider.
func (r *tickRun) ownAny(provider string) bool {
	for _, fs := range r.cfg.OwnFinders {
		if fs[provider] != nil {
			return true
		}
	}
	for _, v := range r.cfg.OwnVerifiers {
		if v != nil && v.Name() == provider {
			return true
		}
	}
	return false
}

// finish queues a lead's outcome for the next grouped flush.
func (r *tickRun) finish(o store.EnrichOutcome) {
	r.mu.Lock()
	r.outcomes.add(o.Status)
	r.mu.Unlock()
	r.out.Add(o)
}

// release gives an unworked lead back exactly as it was due, uncharged.
func (r *tickRun) release(l store.ClaimedLead) {
	r.finish(store.EnrichOutcome{LeadID: l.LeadID, Status: lead.Pending, DueAt: l.PrevDue, Refund: true, KeepFound: true})
}

func (r *tickRun) report(claimed int, started time.Time) Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := Report{
		TickID: r.cfg.TickID, Claimed: claimed, Outcomes: r.outcomes,
		ProviderCalls: make(map[string]int, len(r.calls)),
		DurationMS:    time.Since(started).Milliseconds(),
		RateWaitMS:    time.Duration(r.rateWait.Load()).Milliseconds(),
		Lost:          int(r.lost.Load()),
	}
	for name, n := range r.calls {
		rep.ProviderCalls[name] = int(n.Load())
	}
	return rep
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// inflightContext is the context of the tick's provider requests (see
// tickRun.inflight): detached from signal, cut at the tick's deadline
// (MaxDuration + CallTimeout from started), CallTimeout after a stop of
// signal, and at once when work ends otherwise (outcomes cannot be
// recorded). Lease > MaxDuration + CallTimeout, so no answer arrives for a
// lead another tick has taken.
func (r *tickRun) inflightContext(signal, work context.Context, started time.Time) (context.Context, func()) {
	base, cut := context.WithCancelCause(context.WithoutCancel(signal))
	ctx, cancel := context.WithDeadlineCause(base, started.Add(r.cfg.MaxDuration+r.cfg.CallTimeout),
		fmt.Errorf("the tick's deadline passed (--max-duration %s plus the call timeout %s)", r.cfg.MaxDuration, r.cfg.CallTimeout))
	var timer *time.Timer
	var mu sync.Mutex
	stopWatch := context.AfterFunc(work, func() {
		if signal.Err() == nil {
			cut(context.Cause(work)) // outcomes cannot be recorded
			return
		}
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(r.cfg.CallTimeout, func() {
			cut(fmt.Errorf("the tick was stopped (%v) and the call had no answer within the call timeout %s", context.Cause(signal), r.cfg.CallTimeout))
		})
	})
	return ctx, func() {
		stopWatch()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
		cut(nil)
	}
}
