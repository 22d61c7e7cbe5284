package sequence

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
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
)

// Tick outcomes, as counted in TickReport.Outcomes.
const (
	OutcomeSent            = "sent"
	OutcomeCompleted       = "completed" // sent, and it was the last step
	OutcomeBounced         = "bounced"
	OutcomeRejected        = "rejected"
	OutcomeTransient       = "transient"
	OutcomeMailboxPaused   = "mailbox_paused"
	OutcomeMailboxDisabled = "mailbox_disabled"
	OutcomeReleased        = "released" // not attempted: mailbox paused in this tick, or time is up
	OutcomeUnknown         = "unknown"  // a crash left the step 'sending': not resent
	OutcomeSuppressed      = "suppressed"
	OutcomeFailed          = "failed" // cannot be rendered or retried any more
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
	Logger *slog.Logger
	Now    func() time.Time
}

// TickReport is what a tick did.
type TickReport struct {
	TickID     string         `json:"tick_id"`
	Claimed    int            `json:"claimed"`
	Sent       int            `json:"sent"`
	Outcomes   map[string]int `json:"outcomes"`
	ByMailbox  map[string]int `json:"by_mailbox"`
	DurationMS int64          `json:"duration_ms"`
}

// RunTick claims due enrollments batch after batch until none is due or
// MaxDuration is reached, sends their steps, records every outcome and
// returns. It writes a tick_runs row.
func RunTick(ctx context.Context, pool *pgxpool.Pool, opts TickOptions) (*TickReport, error) {
	opts = opts.withDefaults()
	start := opts.Now()
	t := &emailTick{
		pool: pool, opts: opts,
		report:    &TickReport{TickID: opts.TickID, Outcomes: map[string]int{}, ByMailbox: map[string]int{}},
		campaigns: map[int64]*Campaign{},
		mailboxes: map[int64]*mailboxState{},
		slots:     make(chan struct{}, opts.Concurrency),
	}
	run, err := tick.Start(ctx, pool, tick.KindEmail, opts.TickID)
	if err != nil {
		return nil, err
	}
	// Warm-up ramps grow before the claim reads today's caps.
	if _, err := store.GrowRamps(ctx, pool); err != nil {
		return nil, errors.Join(err, run.Finish(ctx, tick.Result{ExitStatus: 1, Err: err}))
	}
	err = t.run(ctx, start.Add(opts.MaxDuration))
	t.report.DurationMS = opts.Now().Sub(start).Milliseconds()
	res := tick.Result{Claimed: t.report.Claimed, Counts: t.report.Outcomes, Err: err}
	if err != nil {
		res.ExitStatus = 1
	}
	if ferr := run.Finish(ctx, res); ferr != nil && err == nil {
		err = ferr
	}
	return t.report, err
}

func (o TickOptions) withDefaults() TickOptions {
	if o.Batch <= 0 {
		o.Batch = TickBatchDefault
	}
	if o.Concurrency <= 0 {
		o.Concurrency = TickConcurrencyDefault
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = TickMaxDurationDefault
	}
	if o.Lease <= 0 {
		o.Lease = TickLeaseDefault
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TickID == "" {
		o.TickID = tick.NewID()
	}
	return o
}

type emailTick struct {
	pool *pgxpool.Pool
	opts TickOptions

	mu     sync.Mutex
	report *TickReport

	// Loaded once per tick by the claim loop. Mailbox goroutines read
	// campaigns while the loop loads the next batch's, hence the lock;
	// mailboxes is only touched by the loop.
	campaignsMu sync.RWMutex
	campaigns   map[int64]*Campaign
	mailboxes   map[int64]*mailboxState

	// slots bounds how many mailboxes send at once.
	slots chan struct{}
}

func (t *emailTick) campaign(id int64) *Campaign {
	t.campaignsMu.RLock()
	defer t.campaignsMu.RUnlock()
	return t.campaigns[id]
}

type mailboxState struct {
	id  int64
	mb  Mailbox
	err error // the stored mailbox does not validate
	// Set when the mailbox is paused in this tick: rows claimed ahead for
	// it are released without an attempt. Only its drain goroutine (one per
	// batch, batches in sequence) touches these.
	paused      bool
	pausedUntil *time.Time
}

func (t *emailTick) run(ctx context.Context, deadline time.Time) error {
	// A failed batch stops every batch in flight, as SIGTERM does.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	claim := func() ([]store.ClaimedEnrollment, error) {
		if wctx.Err() != nil {
			return nil, nil // stopping (SIGTERM or a failed batch): claim nothing more
		}
		// Never cancelled mid-statement: a claim committed but not read
		// would strand its rows until their lease runs out.
		return store.ClaimEnrollments(context.WithoutCancel(ctx), t.pool, t.opts.Batch, t.opts.Lease, t.opts.TickID)
	}
	recorder := newSendingRecorder(wctx, t.pool, func() int { return len(t.slots) })
	defer recorder.close()
	lanes := map[int64]chan struct{}{}

	// At most two batches are in flight: batch k+1 is claimed while batch k
	// sends, and each of its mailboxes starts as soon as that mailbox is
	// done with batch k, not when the slowest mailbox is.
	var inFlight func() error
	finish := func() error {
		if inFlight == nil {
			return nil
		}
		err := inFlight()
		inFlight = nil
		return err
	}
	rows, err := claim()
	for err == nil && len(rows) > 0 {
		t.report.Claimed += len(rows)
		wait, derr := t.dispatch(wctx, stop, recorder, lanes, rows, deadline)
		werr := errors.Join(derr, finish())
		inFlight = wait
		if werr != nil {
			stop()
			return errors.Join(werr, finish())
		}
		// A full batch suggests more: claim the next one while this one
		// sends. Otherwise wait for it: rows released in it (moved off a
		// paused mailbox) may be due again.
		if !t.opts.Now().Before(deadline) {
			return finish()
		}
		if len(rows) < t.opts.Batch {
			if werr := finish(); werr != nil {
				return werr
			}
		}
		rows, err = claim()
		if !t.opts.Now().Before(deadline) {
			// Claimed ahead but out of time: hand them back untouched.
			return errors.Join(finish(), t.releaseAll(ctx, rows))
		}
	}
	return errors.Join(err, finish())
}

// releaseAll hands rows claimed ahead back, due as before.
func (t *emailTick) releaseAll(ctx context.Context, rows []store.ClaimedEnrollment) error {
	if len(rows) == 0 {
		return nil
	}
	t.report.Claimed += len(rows)
	var set store.Settlement
	for _, r := range rows {
		set.Enrollments = append(set.Enrollments, store.EnrollmentUpdate{ID: r.ID, Status: "active", CurrentStep: r.Step, NextSendAt: r.DueAt, Attempts: r.Attempts})
		t.count(OutcomeReleased, "")
	}
	return t.settleNow(context.WithoutCancel(ctx), set)
}

// dispatch starts sending one claimed batch and returns a wait for it: one
// goroutine per mailbox (its messages go in order over one connection),
// started after the same mailbox's goroutine of the previous batch (lanes),
// at most Concurrency mailboxes sending at once. A failure calls stop.
func (t *emailTick) dispatch(ctx context.Context, stop func(), rec *sendingRecorder, lanes map[int64]chan struct{}, rows []store.ClaimedEnrollment, deadline time.Time) (func() error, error) {
	if err := t.load(ctx, rows); err != nil {
		return nil, err
	}
	settler := tick.NewBatcher(ctx, tick.BatchSizeDefault, tick.BatchEveryDefault, t.settle)

	queues := map[int64][]store.ClaimedEnrollment{}
	var order []int64
	for _, r := range rows {
		if t.settleWithoutSending(settler, r) {
			continue
		}
		if _, ok := queues[r.MailboxID]; !ok {
			order = append(order, r.MailboxID)
		}
		queues[r.MailboxID] = append(queues[r.MailboxID], r)
	}

	var g errgroup.Group
	for _, id := range order {
		mbs, queue := t.mailboxes[id], queues[id]
		prev, done := lanes[id], make(chan struct{})
		lanes[id] = done
		g.Go(func() error {
			defer close(done)
			if prev != nil {
				<-prev
			}
			select {
			case t.slots <- struct{}{}:
				defer func() { <-t.slots }()
			case <-ctx.Done():
				// Stopping: the drain only releases its rows; it needs no slot.
			}
			err := t.drain(ctx, settler, rec, mbs, queue, deadline)
			if err != nil {
				stop()
			}
			return err
		})
	}
	return func() error { return errors.Join(g.Wait(), settler.Close()) }, nil
}

// settle writes a group of outcomes in one transaction.
func (t *emailTick) settle(ctx context.Context, group []store.Settlement) error {
	var all store.Settlement
	for _, s := range group {
		all.Sends = append(all.Sends, s.Sends...)
		all.Enrollments = append(all.Enrollments, s.Enrollments...)
		all.Suppressions = append(all.Suppressions, s.Suppressions...)
	}
	return t.settleNow(ctx, all)
}

// load reads the campaigns and mailboxes a batch needs, once per tick.
func (t *emailTick) load(ctx context.Context, rows []store.ClaimedEnrollment) error {
	var missing []int64
	for _, r := range rows {
		if t.campaign(r.CampaignID) == nil {
			rec, err := store.LoadCampaign(ctx, t.pool, r.CampaignID)
			if err != nil {
				return err
			}
			c, err := campaignFromRecord(rec)
			if err != nil {
				return err
			}
			t.campaignsMu.Lock()
			t.campaigns[r.CampaignID] = c
			t.campaignsMu.Unlock()
		}
		if _, ok := t.mailboxes[r.MailboxID]; !ok {
			t.mailboxes[r.MailboxID] = nil
			missing = append(missing, r.MailboxID)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	recs, err := store.Mailboxes(ctx, t.pool, missing)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		mb, err := MailboxFromRecord(rec)
		t.mailboxes[rec.ID] = &mailboxState{id: rec.ID, mb: mb, err: err}
	}
	return nil
}

// settleWithoutSending handles rows that must not reach SMTP.
func (t *emailTick) settleWithoutSending(s *tick.Batcher[store.Settlement], r store.ClaimedEnrollment) bool {
	now := t.opts.Now()
	c := t.campaign(r.CampaignID)
	switch {
	case r.StepSend != "":
		// At-most-once: a crash between 'sending' and 'sent' leaves the
		// delivery unknown. An operator decides (docs/email.md).
		t.count(OutcomeUnknown, "")
		s.Add(store.Settlement{Enrollments: []store.EnrollmentUpdate{{
			ID: r.ID, Status: "failed", CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts,
			LastError: fmt.Sprintf("step %d delivery unknown: its send was left %q by a stopped tick; check the mailbox's Sent folder, then requeue or leave it", r.Step, r.StepSend),
		}}})
	case r.Suppressed != "":
		status := "failed"
		if r.Suppressed == "bounced" || r.Suppressed == "unsubscribed" {
			status = r.Suppressed
		}
		t.count(OutcomeSuppressed, "")
		s.Add(store.Settlement{Enrollments: []store.EnrollmentUpdate{{
			ID: r.ID, Status: status, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts,
			LastError: "address suppressed: " + r.Suppressed,
		}}})
	case r.Step > len(c.Steps):
		// A re-import removed the remaining steps.
		t.count(OutcomeCompleted, "")
		s.Add(store.Settlement{Enrollments: []store.EnrollmentUpdate{{ID: r.ID, Status: "completed", CurrentStep: r.Step, NextSendAt: now}}})
	default:
		return false
	}
	return true
}

// drain sends one mailbox's queue in order. A mailbox-level failure stops
// the queue: the mailbox gets one attempt per tick, the rest is released.
// While a message is on the wire, the next one's 'sending' row is already
// being committed, so the database round trip overlaps SMTP.
func (t *emailTick) drain(ctx context.Context, s *tick.Batcher[store.Settlement], rec *sendingRecorder, mbs *mailboxState, queue []store.ClaimedEnrollment, deadline time.Time) error {
	if mbs == nil || mbs.err != nil {
		err := fmt.Errorf("mailbox %d cannot be used", queue[0].MailboxID)
		if mbs != nil {
			err = mbs.err
		}
		return t.pauseMailbox(ctx, s, mbs, &DeliveryError{Kind: DeliveryMailboxDisabled, Err: err}, queue, nil)
	}
	if mbs.paused {
		// Paused earlier in this tick; these rows were claimed ahead.
		s.Add(store.Settlement{Enrollments: t.pauseReleases(queue, mbs.pausedUntil, "mailbox paused")})
		t.countN(OutcomeReleased, len(queue))
		return nil
	}
	if ctx.Err() != nil || !t.opts.Now().Before(deadline) {
		// Stopping before this mailbox's turn: nothing was recorded.
		t.release(s, queue, func(r store.ClaimedEnrollment) time.Time { return r.DueAt }, "", nil)
		return nil
	}
	next := t.prepare(ctx, rec, mbs, queue[0])
	for i := range queue {
		cur := next
		<-cur.done
		if cur.err != nil && ctx.Err() == nil {
			return cur.err
		}
		// Stopping (SIGTERM, or out of time): a row whose 'sending' record
		// was cut short by the signal was not written, so it is released too.
		if ctx.Err() != nil || !t.opts.Now().Before(deadline) {
			t.release(s, queue[i:], func(r store.ClaimedEnrollment) time.Time { return r.DueAt }, "", unsent(cur))
			return nil
		}
		next = nil
		if i+1 < len(queue) {
			next = t.prepare(ctx, rec, mbs, queue[i+1])
		}
		r := cur.r
		switch {
		case cur.composeErr != nil:
			t.count(OutcomeFailed, "")
			s.Add(store.Settlement{Enrollments: []store.EnrollmentUpdate{{ID: r.ID, Status: "failed", CurrentStep: r.Step, NextSendAt: t.opts.Now(), Attempts: r.Attempts, LastError: cur.composeErr.Error()}}})
			continue
		case !cur.recorded:
			r.StepSend = "sending"
			t.settleWithoutSending(s, r)
			continue
		}
		sendErr := t.opts.Mailer.Send(ctx, mbs.mb, cur.msg)
		if sendErr == nil {
			t.sent(s, t.campaign(r.CampaignID), r, mbs)
			continue
		}
		de := ClassifyDelivery(sendErr)
		t.opts.Logger.Warn("smtp delivery failed", "mailbox", mbs.mb.Address, "enrollment_id", r.ID, "step", r.Step,
			"kind", string(de.Kind), "code", de.Code, "enhanced", de.Enhanced, "error", sendErr.Error(), "tick_id", t.opts.TickID)
		if pause, _ := de.PausesMailbox(); pause {
			return t.pauseMailbox(ctx, s, mbs, de, queue[i:], next)
		}
		t.failed(s, r, de)
		if de.Kind == DeliveryTransient && de.Code == 0 {
			// No SMTP reply at all (connection refused, dropped): do not
			// hammer the server with the rest of the queue this tick.
			retry := t.opts.Now().Add(TransientBackoffBaseDefault)
			t.release(s, queue[i+1:], func(store.ClaimedEnrollment) time.Time { return retry }, "mailbox connection failed: "+de.Error(), unsent(next))
			return nil
		}
	}
	return nil
}

// prepared is a composed message whose 'sending' row is being recorded.
type prepared struct {
	r          store.ClaimedEnrollment
	msg        *Message
	composeErr error
	recorded   bool
	err        error
	done       chan struct{}
}

func (t *emailTick) prepare(ctx context.Context, rec *sendingRecorder, mbs *mailboxState, r store.ClaimedEnrollment) *prepared {
	p := &prepared{r: r, done: make(chan struct{})}
	lead := Lead{FirstName: r.FirstName, LastName: r.LastName, Company: r.Company, Email: r.Email, Domain: r.Domain}
	if lead.Domain == "" {
		lead.Domain = r.Email[strings.LastIndexByte(r.Email, '@')+1:]
	}
	p.msg, p.composeErr = t.campaign(r.CampaignID).Compose(r.Step-1, lead, mbs.mb, NewMessageID(mbs.mb.Address), r.Thread)
	if p.composeErr != nil {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		p.recorded, p.err = rec.record(ctx, store.SendStart{EnrollmentID: r.ID, Step: r.Step, MailboxID: mbs.id, MessageID: p.msg.MessageID})
	}()
	return p
}

// unsent settles a prepared message that will not go out after all: its
// 'sending' row becomes 'failed' (not delivered), so a retry takes it over.
func unsent(p *prepared) []store.SendResult {
	if p == nil {
		return nil
	}
	<-p.done
	if !p.recorded {
		return nil
	}
	return []store.SendResult{{EnrollmentID: p.r.ID, Step: p.r.Step, Status: store.SendFailed, Error: "not sent: the tick stopped this mailbox first"}}
}

func (t *emailTick) sent(s *tick.Batcher[store.Settlement], c *Campaign, r store.ClaimedEnrollment, mbs *mailboxState) {
	now := t.opts.Now()
	u := store.EnrollmentUpdate{ID: r.ID, Status: "active", CurrentStep: r.Step + 1, MailboxID: mbs.id, NextSendAt: now}
	outcome := OutcomeSent
	if r.Step >= len(c.Steps) {
		u.Status, u.CurrentStep, outcome = "completed", r.Step, OutcomeCompleted
	} else {
		u.NextSendAt = c.Window.Next(now.Add(c.Steps[r.Step].Delay), r.Timezone)
	}
	t.count(outcome, mbs.mb.Address)
	s.Add(store.Settlement{
		Sends:       []store.SendResult{{EnrollmentID: r.ID, Step: r.Step, Status: store.SendSent, SentAt: now}},
		Enrollments: []store.EnrollmentUpdate{u},
	})
}

func (t *emailTick) failed(s *tick.Batcher[store.Settlement], r store.ClaimedEnrollment, de *DeliveryError) {
	now := t.opts.Now()
	u := store.EnrollmentUpdate{ID: r.ID, Status: "active", CurrentStep: r.Step, Attempts: r.Attempts, LastError: de.Error()}
	res := store.SendResult{EnrollmentID: r.ID, Step: r.Step, Status: store.SendFailed, Error: de.Error()}
	set := store.Settlement{}
	switch de.Kind {
	case DeliveryBounced:
		u.Status, u.NextSendAt = "bounced", now
		set.Suppressions = []store.Suppression{{WorkspaceID: r.WorkspaceID, Email: r.Email, Reason: "bounced"}}
		t.count(OutcomeBounced, "")
	case DeliveryRejected:
		u.Status, u.NextSendAt = "failed", now
		t.count(OutcomeRejected, "")
	default: // transient
		u.Attempts++
		u.NextSendAt = now.Add(TransientBackoff(u.Attempts))
		if u.Attempts >= TransientAttemptsMaxDefault {
			u.Status = "failed"
			t.count(OutcomeFailed, "")
		} else {
			t.count(OutcomeTransient, "")
		}
	}
	set.Sends, set.Enrollments = []store.SendResult{res}, []store.EnrollmentUpdate{u}
	s.Add(set)
}

// release hands rows back untouched (no attempt counted), due at due(r).
func (t *emailTick) release(s *tick.Batcher[store.Settlement], rows []store.ClaimedEnrollment, due func(store.ClaimedEnrollment) time.Time, why string, sends []store.SendResult) {
	if len(rows) == 0 {
		return
	}
	set := store.Settlement{Sends: sends}
	for _, r := range rows {
		set.Enrollments = append(set.Enrollments, store.EnrollmentUpdate{ID: r.ID, Status: "active", CurrentStep: r.Step, NextSendAt: due(r), Attempts: r.Attempts, LastError: why})
		t.count(OutcomeReleased, "")
	}
	s.Add(set)
}

// pauseMailbox pauses (or disables) a mailbox after its provider limited
// it, in one transaction: the mailbox row, a mailbox_paused event, the
// failed row and the rest of the queue released without an attempt, and the
// mailbox's unsent step-1 enrollments moved to healthy mailboxes. Follow-ups
// wait for the mailbox: their thread belongs to it.
func (t *emailTick) pauseMailbox(ctx context.Context, s *tick.Batcher[store.Settlement], mbs *mailboxState, de *DeliveryError, rows []store.ClaimedEnrollment, next *prepared) error {
	now := t.opts.Now()
	_, d := de.PausesMailbox()
	var until *time.Time
	kind, outcome := "mailbox_disabled", OutcomeMailboxDisabled
	if d > 0 {
		u := now.Add(d)
		until, kind, outcome = &u, "mailbox_paused", OutcomeMailboxPaused
	}
	reason := fmt.Sprintf("%s: %v", de.Kind, de.Err)
	set := store.Settlement{
		Sends:       append([]store.SendResult{{EnrollmentID: rows[0].ID, Step: rows[0].Step, Status: store.SendFailed, Error: de.Error()}}, unsent(next)...),
		Enrollments: t.pauseReleases(rows, until, reason),
	}
	if mbs == nil {
		// The mailbox row is gone: just release.
		return t.settleNow(ctx, set)
	}
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		workspaceID, address, err := store.PauseMailbox(ctx, tx, mbs.id, until, reason)
		if err != nil {
			return err
		}
		episode := strconv.FormatInt(now.Unix(), 10)
		if until != nil {
			episode = strconv.FormatInt(until.Unix(), 10)
		}
		payload := map[string]any{"address": address, "kind": string(de.Kind), "code": de.Code, "enhanced": de.Enhanced, "paused_until": until, "tick_id": t.opts.TickID}
		if err := store.InsertEvent(ctx, tx, kind, workspaceID, mbs.id, kind+":"+strconv.FormatInt(mbs.id, 10)+":"+episode, payload); err != nil {
			return err
		}
		if err := store.Settle(ctx, tx, t.opts.TickID, set); err != nil {
			return err
		}
		campaigns, err := store.MailboxCampaigns(ctx, tx, mbs.id)
		if err != nil {
			return err
		}
		if err := store.LockCampaigns(ctx, tx, campaigns); err != nil {
			return err
		}
		for _, id := range campaigns {
			if _, err := rebindOrphans(ctx, tx, id, t.opts.TickID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pause mailbox %s: %w", mbs.mb.Address, err)
	}
	mbs.paused, mbs.pausedUntil = true, until
	t.opts.Logger.Warn("mailbox paused", "mailbox", mbs.mb.Address, "kind", string(de.Kind), "paused_until", until, "released", len(rows), "tick_id", t.opts.TickID)
	t.count(outcome, "")
	t.countN(OutcomeReleased, len(rows)-1)
	return nil
}

// pauseReleases hands a paused mailbox's rows back without an attempt:
// step-1 rows are due now (rebinding moves them to a healthy mailbox),
// follow-ups wait for their own mailbox's pause to end.
func (t *emailTick) pauseReleases(rows []store.ClaimedEnrollment, until *time.Time, reason string) []store.EnrollmentUpdate {
	now := t.opts.Now()
	updates := make([]store.EnrollmentUpdate, len(rows))
	for i, r := range rows {
		due := r.DueAt
		switch {
		case r.Step == 1:
			due = now
		case until != nil:
			due = *until
		}
		updates[i] = store.EnrollmentUpdate{ID: r.ID, Status: "active", CurrentStep: r.Step, NextSendAt: due, Attempts: r.Attempts, LastError: reason}
	}
	return updates
}

func (t *emailTick) settleNow(ctx context.Context, set store.Settlement) error {
	return store.Settle(ctx, t.pool, t.opts.TickID, set)
}

func (t *emailTick) countN(outcome string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n > 0 {
		t.report.Outcomes[outcome] += n
	}
}

func (t *emailTick) count(outcome, mailbox string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.report.Outcomes[outcome]++
	if mailbox != "" {
		t.report.Sent++
		t.report.ByMailbox[mailbox]++
	}
}
