package sequence

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Defaults of `rindactl email tick`.
const (
	TickBatchDefault       = 500
	TickConcurrencyDefault = 18
	TickMaxDurationDefault = 50 * time.Second
	TickLeaseDefault       = 5 * time.Minute
	// TransientAttemptsMaxDefault ends an enrollment after this many
	// transient failures of the same step (about a day of backoff).
	TransientAttemptsMaxDefault = 10
	// TickSMTPGraceDefault is how long a message already on the wire at
	// the tick's deadline may still take: no SMTP phase runs past the
	// deadline plus this grace, so a tick ends within --max-duration plus
	// about a second whatever its servers do.
	TickSMTPGraceDefault = time.Second
)

// Tick outcomes, as counted in TickReport.Outcomes.
const (
	OutcomeSent          = string(enrollment.SendSent)
	OutcomeCompleted     = string(enrollment.Completed) // sent, and it was the last step
	OutcomeBounced       = string(enrollment.Bounced)
	OutcomeRejected      = "rejected"
	OutcomeTransient     = "transient"
	OutcomeMailboxPaused = "mailbox_paused"
	OutcomeReleased      = "released" // not attempted: mailbox paused in this tick, or time is up
	// OutcomeOutsideWindow: not attempted, the lead's sending window was
	// shut at its turn; due again when the window opens.
	OutcomeOutsideWindow = "outside_window"
	OutcomeUnknown       = "unknown" // a crash left the step 'sending': not resent
	// OutcomeDeliveryUnknown: the final dot went out and no answer came;
	// the enrollment is delivery_unknown and the step is never resent.
	OutcomeDeliveryUnknown = string(enrollment.DeliveryUnknown)
	OutcomeSuppressed      = "suppressed"
	OutcomeDuplicate       = "duplicate"               // another enrollment of the campaign already mails this address
	OutcomeFailed          = string(enrollment.Failed) // cannot be rendered or retried any more
	// OutcomeUnrecorded counts outcomes whose write failed (database
	// lost): the report holds only what was committed, these rows stay
	// leased and a later tick sees them ('sending' ones as unknown).
	OutcomeUnrecorded = "unrecorded"
)

// TickOptions configures one email tick.
type TickOptions struct {
	Batch       int
	Concurrency int
	MaxDuration time.Duration
	Lease       time.Duration
	// TickID names the tick in leases and tick_runs; empty generates one.
	TickID string
	Mailer *Mailer
	// UnsubscribeBaseURL is where `rindactl unsubscribe serve` is reached
	// (unsubscribe.ParseBaseURL); empty: messages carry only the mailto:
	// unsubscribe, or the campaign's unsubscribe_url.
	UnsubscribeBaseURL string
	Logger             *slog.Logger
	Now                func() time.Time
}

// TickReport is what a tick did.
type TickReport struct {
	TickID     string         `json:"tick_id"`
	Claimed    int            `json:"claimed"`
	Sent       int            `json:"sent"`
	Outcomes   map[string]int `json:"outcomes"`
	ByMailbox  map[string]int `json:"by_mailbox"`
	DurationMS int64          `json:"duration_ms"`
	// Timing: where the time went (bench/results/
	// 2026-12-03-2130-where-an-emails-time-goes.md).
	Timing TickTiming `json:"timing"`
}

// RunTick claims due enrollments batch after batch until none is due or
// MaxDuration is reached, sends their steps, records every outcome and
// returns. It writes a tick_runs row.
func RunTick(ctx context.Context, pool *pgxpool.Pool, opts TickOptions) (*TickReport, error) {
	opts = opts.withDefaults()
	start := opts.Now()
	t := &emailTick{
		pool: pool, opts: opts,
		report:      &TickReport{TickID: opts.TickID, Outcomes: map[string]int{}, ByMailbox: map[string]int{}},
		bounceHalts: map[int64]time.Time{},
		mailboxes:   map[int64]*mailboxState{},
		slots:       make(chan struct{}, opts.Concurrency),
	}
	t.loaded.Store(&loaded{campaigns: map[int64]*Campaign{}, unsubKeys: map[int64][]byte{}})
	ran, err := tick.Run(ctx, pool, tick.Spec{Kind: tickkind.Email, ID: opts.TickID, ClaimsFor: opts.MaxDuration}, func(ctx context.Context, _ time.Time) tick.Outcome {
		// Warm-up ramps grow before the claim reads today's caps.
		_, err := store.GrowRamps(ctx, pool)
		if err == nil {
			err = t.run(ctx, start.Add(opts.MaxDuration))
		}
		t.report.countUnrecorded()
		t.report.DurationMS = opts.Now().Sub(start).Milliseconds()
		t.report.Timing = t.clock.timing()
		// A signal between two units of work (before the first claim,
		// while loading a batch's campaigns) left nothing half-done; rows
		// claimed and never recorded make it a failure.
		return tick.Outcome{Claimed: t.report.Claimed, Counts: t.report.Outcomes, Err: err,
			Unsettled: t.report.Outcomes[OutcomeUnrecorded] > 0}
	})
	if !ran && err != nil {
		return nil, err // no start recorded: nothing to report
	}
	return t.report, err
}

// countUnrecorded counts the claimed rows no committed outcome covers:
// their writes failed or never ran (database lost), so they stay leased.
func (r *TickReport) countUnrecorded() {
	recorded := 0
	for _, n := range r.Outcomes {
		recorded += n
	}
	if r.Claimed > recorded {
		r.Outcomes[OutcomeUnrecorded] = r.Claimed - recorded
	}
}

func (o TickOptions) withDefaults() TickOptions {
	tick.Defaults(&o, TickOptions{
		Batch: TickBatchDefault, Concurrency: TickConcurrencyDefault,
		MaxDuration: TickMaxDurationDefault, Lease: TickLeaseDefault,
		Now: time.Now, Logger: slog.New(slog.DiscardHandler), TickID: tick.NewID(),
	})
	return o
}

type emailTick struct {
	pool *pgxpool.Pool
	opts TickOptions

	mu     sync.Mutex
	report *TickReport
	// bounceHalts are the mailboxes the bounce-rate guard paused in this
	// tick, until when.
	bounceHalts map[int64]time.Time

	// Loaded once per tick by the claim loop (load): the campaigns and
	// unsubscribe keys lanes read, and the mailboxes only the loop touches.
	loaded    atomic.Pointer[loaded]
	mailboxes map[int64]*mailboxState

	// slots bounds how many mailboxes send at once.
	slots chan struct{}

	clock tickClock
}

// loaded is what the claim loop has loaded for the tick's batches. Lanes
// read it while the loop loads the next batch's, so a published one is
// never changed: the loop publishes a grown copy instead (once per new
// campaign or workspace in a tick), and no lock is taken.
type loaded struct {
	campaigns map[int64]*Campaign
	// unsubKeys are the workspaces' unsubscribe token keys, by workspace id.
	unsubKeys map[int64][]byte
}

func (l *loaded) clone() *loaded {
	return &loaded{campaigns: maps.Clone(l.campaigns), unsubKeys: maps.Clone(l.unsubKeys)}
}

func (t *emailTick) campaign(id int64) *Campaign {
	return t.loaded.Load().campaigns[id]
}

// unsubscribeToken is the enrollment's unsubscribe token, under its
// workspace's key (loaded with the batch).
func (t *emailTick) unsubscribeToken(r store.ClaimedEnrollment) string {
	return unsubscribe.Sign(t.loaded.Load().unsubKeys[r.WorkspaceID], r.ID)
}

type mailboxState struct {
	id  int64
	mb  Mailbox
	err error // the stored mailbox does not validate
	// Set when the mailbox is paused in this tick: rows claimed ahead for
	// it are released without an attempt. Only its lane (one job at a
	// time) touches these.
	paused      bool
	pausedUntil *time.Time
	// pending are the mailbox's outcomes not yet handed to a writer: the
	// next 'sending' row carries them (sendingRecorder), or the settle
	// writer takes them when the mailbox has no next job yet (handOff).
	pending []outcome
	// handedOff is closed once the outcomes handOff gave the settle
	// writer are written (or failed): the mailbox's next job waits for it
	// before its first 'sending' row, so the crash bound holds across jobs.
	handedOff <-chan struct{}
}

// outcome is a group of rows to settle and the report counts it stands
// for: the counts reach the report only once the group is committed, so the
// report says what the database holds.
type outcome struct {
	set     store.Settlement
	kind    string
	n       int
	mailbox string // set for sent messages
	// bounced is the mailbox of a hard bounce, whose bounce rate is
	// checked once the outcome is committed.
	bounced int64
	// written, when set, is closed once the settle writer has written (or
	// failed to write) the outcome's group.
	written chan struct{}
}

// pipeline is what one run's batches share: the run's context (cancelled
// by the first failed job, a failed claim loop or the settle writer's
// error: each ends the run), its jobs, the two writers, the lanes and the
// deadline.
type pipeline struct {
	ctx      context.Context
	jobs     *errgroup.Group
	settler  *tick.Batcher[outcome]
	recorder *sendingRecorder
	book     *laneBook
	deadline time.Time
}

func (t *emailTick) run(ctx context.Context, deadline time.Time) error {
	// A failed mailbox job stops the whole tick, as SIGTERM does (the
	// group cancels wctx); so does a failed claim loop or settle writer
	// (stop). The writers detach from it (context.WithoutCancel): they
	// still record what was finished, after Wait cancels wctx too.
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	jobs, wctx := errgroup.WithContext(cctx)
	p := &pipeline{ctx: wctx, jobs: jobs, book: newLaneBook(), deadline: deadline,
		recorder: newSendingRecorder(wctx, t.pool, t),
		settler:  tick.NewBatcher(wctx, tick.BatchSizeDefault, tick.BatchEveryDefault, t.settle)}
	defer p.recorder.close()

	var loopErr error
	for seq, retries := 0, 0; ; {
		if wctx.Err() != nil || p.settler.Err() != nil || !t.opts.Now().Before(deadline) {
			break
		}
		mark := p.book.mark()
		claim, inTime, err := t.claim(ctx, p.book, seq, deadline)
		if !inTime {
			loopErr = err
			break
		}
		rows := claim.Rows
		if len(rows) > 0 {
			seq, retries = seq+1, 0
			if err := t.dispatch(p, seq, rows); err != nil {
				loopErr = err
				break
			}
		} else if p.book.idle() {
			// Nothing due, nothing sending; unless another tick's claim
			// held some mailboxes this time: they may have rows for us.
			if !claim.Contended || retries == claimRetriesMax || tick.Sleep(wctx, claimRetryWait) != nil {
				break
			}
			retries++
			continue
		}
		if !p.book.waitReady(wctx, deadline, seq, mark, len(rows) == t.opts.Batch) {
			break
		}
	}
	if loopErr != nil || p.settler.Err() != nil {
		stop()
	}
	werr := p.jobs.Wait()
	// Every job has ended: outcomes a job left for the one behind it that
	// it saw queued are all carried or handed off by then; nothing pends.
	return errors.Join(loopErr, werr, p.settler.Close())
}

// A claim that found nothing because other ticks' claims held mailboxes
// (their locks last a claim's few milliseconds) is tried again after
// claimRetryWait, at most claimRetriesMax times in a row.
const (
	claimRetryWait  = 20 * time.Millisecond
	claimRetriesMax = 10
)

// claim leases the next batch, none of it on mailboxes still busy with a
// batch before seq. inTime is false when the claim failed (err) or the
// deadline passed meanwhile: then the rows went back untouched.
func (t *emailTick) claim(ctx context.Context, book *laneBook, seq int, deadline time.Time) (claim store.EmailClaim, inTime bool, err error) {
	// Never cancelled mid-statement: a claim committed but not read
	// would strand its rows until their lease runs out.
	began := time.Now()
	defer t.clock.since(phaseClaim, began)
	claim, err = store.ClaimEnrollments(context.WithoutCancel(ctx), t.pool, store.EmailClaimRequest{
		Batch: t.opts.Batch, Lease: t.opts.Lease, TickID: t.opts.TickID, Busy: book.stragglers(seq)})
	if err != nil {
		return store.EmailClaim{}, false, err
	}
	t.report.Claimed += len(claim.Rows)
	if !t.opts.Now().Before(deadline) {
		return store.EmailClaim{}, false, t.releaseAll(ctx, claim.Rows)
	}
	return claim, true, nil
}
