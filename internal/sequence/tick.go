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

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
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
	OutcomeSent            = string(enrollment.SendSent)
	OutcomeCompleted       = string(enrollment.Completed) // sent, and it was the last step
	OutcomeBounced         = string(enrollment.Bounced)
	OutcomeRejected        = "rejected"
	OutcomeTransient       = "transient"
	OutcomeMailboxPaused   = "mailbox_paused"
	OutcomeMailboxDisabled = "mailbox_disabled"
	OutcomeReleased        = "released" // not attempted: mailbox paused in this tick, or time is up
	OutcomeUnknown         = "unknown"  // a crash left the step 'sending': not resent
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
	run, err := tick.Start(ctx, pool, tickkind.Email, opts.TickID)
	if err != nil {
		return nil, err
	}
	// Warm-up ramps grow before the claim reads today's caps.
	if _, err := store.GrowRamps(ctx, pool); err != nil {
		return nil, errors.Join(err, run.Finish(ctx, tick.Result{ExitStatus: 1, Err: err}))
	}
	err = t.run(ctx, start.Add(opts.MaxDuration))
	t.report.countUnrecorded()
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
	// it are released without an attempt. Only its lane (one job at a
	// time) touches these.
	paused      bool
	pausedUntil *time.Time
}

// outcome is a group of rows to settle and the report counts it stands
// for: the counts reach the report only once the group is committed, so the
// report says what the database holds.
type outcome struct {
	set     store.Settlement
	kind    string
	n       int
	mailbox string // set for sent messages
}

func (t *emailTick) run(ctx context.Context, deadline time.Time) error {
	// A failed mailbox job stops the whole tick, as SIGTERM does.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	recorder := newSendingRecorder(wctx, t.pool, func() int { return len(t.slots) })
	defer recorder.close()
	settler := tick.NewBatcher(wctx, tick.BatchSizeDefault, tick.BatchEveryDefault, t.settle)
	book := newLaneBook()
	var g errgroup.Group

	var loopErr error
	for seq := 0; ; {
		if wctx.Err() != nil || settler.Err() != nil || !t.opts.Now().Before(deadline) {
			break
		}
		mark := book.mark()
		// Never cancelled mid-statement: a claim committed but not read
		// would strand its rows until their lease runs out.
		rows, err := store.ClaimEnrollments(context.WithoutCancel(ctx), t.pool, t.opts.Batch, t.opts.Lease, t.opts.TickID, book.stragglers(seq)...)
		if err != nil {
			loopErr = err
			break
		}
		t.report.Claimed += len(rows)
		if !t.opts.Now().Before(deadline) {
			// Claimed ahead but out of time: hand them back untouched.
			loopErr = t.releaseAll(ctx, rows)
			break
		}
		if len(rows) > 0 {
			seq++
			if err := t.dispatch(wctx, stop, &g, settler, recorder, book, seq, rows, deadline); err != nil {
				loopErr = err
				break
			}
		} else if book.idle() {
			break // nothing due, nothing sending
		}
		if !book.waitReady(wctx, deadline, seq, mark, len(rows) == t.opts.Batch) {
			break
		}
	}
	if loopErr != nil || settler.Err() != nil {
		stop()
	}
	return errors.Join(loopErr, g.Wait(), settler.Close())
}

// releaseAll hands rows claimed ahead back, due as before.
func (t *emailTick) releaseAll(ctx context.Context, rows []store.ClaimedEnrollment) error {
	if len(rows) == 0 {
		return nil
	}
	var set store.Settlement
	for _, r := range rows {
		set.Enrollments = append(set.Enrollments, store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, NextSendAt: r.DueAt, Attempts: r.Attempts})
	}
	return t.settle(context.WithoutCancel(ctx), []outcome{{set: set, kind: OutcomeReleased, n: len(rows)}})
}

// dispatch starts sending one claimed batch: one job per mailbox (its
// messages go in order over one connection), started after the same
// mailbox's previous job (its lane), at most Concurrency mailboxes sending
// at once. A failure calls stop.
func (t *emailTick) dispatch(ctx context.Context, stop func(), g *errgroup.Group, s *tick.Batcher[outcome], rec *sendingRecorder, book *laneBook, seq int, rows []store.ClaimedEnrollment, deadline time.Time) error {
	if err := t.load(ctx, rows); err != nil {
		// Loading failed before any row was worked: hand them all back.
		return errors.Join(err, t.releaseAll(ctx, rows))
	}
	queues := map[int64][]store.ClaimedEnrollment{}
	var order []int64
	for _, r := range rows {
		if t.settleWithoutSending(s, r) {
			continue
		}
		if _, ok := queues[r.MailboxID]; !ok {
			order = append(order, r.MailboxID)
		}
		queues[r.MailboxID] = append(queues[r.MailboxID], r)
	}
	for _, id := range order {
		mbs, queue := t.mailboxes[id], queues[id]
		prev, done := book.start(id, seq)
		g.Go(func() error {
			defer done()
			if prev != nil {
				<-prev
			}
			select {
			case t.slots <- struct{}{}:
				defer func() { <-t.slots }()
			case <-ctx.Done():
				// Stopping: the drain only releases its rows; it needs no slot.
			}
			err := t.drain(ctx, s, rec, mbs, queue, deadline)
			if err != nil {
				stop()
			}
			return err
		})
	}
	return nil
}

// settle writes a group of outcomes in one transaction, then counts them.
func (t *emailTick) settle(ctx context.Context, group []outcome) error {
	var all store.Settlement
	for _, o := range group {
		all.Sends = append(all.Sends, o.set.Sends...)
		all.Enrollments = append(all.Enrollments, o.set.Enrollments...)
		all.Suppressions = append(all.Suppressions, o.set.Suppressions...)
	}
	if err := store.Settle(ctx, t.pool, t.opts.TickID, all); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, o := range group {
		if o.n > 0 {
			t.report.Outcomes[o.kind] += o.n
			if o.mailbox != "" {
				t.report.Sent += o.n
				t.report.ByMailbox[o.mailbox] += o.n
			}
		}
	}
	return nil
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
func (t *emailTick) settleWithoutSending(s *tick.Batcher[outcome], r store.ClaimedEnrollment) bool {
	now := t.opts.Now()
	c := t.campaign(r.CampaignID)
	switch {
	case r.StepSend != "":
		// At-most-once: a crash between 'sending' and 'sent' leaves the
		// delivery unknown. An operator decides (docs/email.md).
		why := fmt.Sprintf("step %d delivery unknown: its send was left %q by a stopped tick; check the mailbox's Sent folder, then requeue --status=delivery_unknown or leave it", r.Step, r.StepSend)
		s.Add(outcome{kind: OutcomeUnknown, n: 1, set: store.Settlement{
			Sends: []store.SendResult{{EnrollmentID: r.ID, Step: r.Step, Status: enrollment.SendDeliveryUnknown, Error: why, Metric: store.MetricDeliveryUnknown}},
			Enrollments: []store.EnrollmentUpdate{{
				ID: r.ID, Status: enrollment.DeliveryUnknown, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts, LastError: why,
			}}}})
	case r.Suppressed != "":
		status := enrollment.Failed
		if reason := enrollment.Status(r.Suppressed); reason == enrollment.Bounced || reason == enrollment.Unsubscribed {
			status = reason
		}
		s.Add(outcome{kind: OutcomeSuppressed, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{
			ID: r.ID, Status: status, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts,
			LastError: "address suppressed: " + r.Suppressed,
		}}}})
	case r.Step > len(c.Steps):
		// A re-import removed the remaining steps.
		s.Add(outcome{kind: OutcomeCompleted, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{ID: r.ID, Status: enrollment.Completed, CurrentStep: r.Step, NextSendAt: now}}}})
	default:
		return false
	}
	return true
}

// drain sends one mailbox's queue in order. A mailbox-level failure stops
// the queue: the mailbox gets one attempt per tick, the rest is released.
// While a message is on the wire, the next one's 'sending' row is already
// being committed, so the database round trip overlaps SMTP.
func (t *emailTick) drain(ctx context.Context, s *tick.Batcher[outcome], rec *sendingRecorder, mbs *mailboxState, queue []store.ClaimedEnrollment, deadline time.Time) error {
	if mbs == nil || mbs.err != nil {
		err := fmt.Errorf("mailbox %d cannot be used", queue[0].MailboxID)
		if mbs != nil {
			err = mbs.err
		}
		return t.pauseMailbox(ctx, mbs, &DeliveryError{Kind: DeliveryMailboxDisabled, Err: err}, queue, nil)
	}
	if mbs.paused {
		// Paused earlier in this tick; these rows were claimed ahead.
		s.Add(outcome{kind: OutcomeReleased, n: len(queue), set: store.Settlement{Enrollments: t.pauseReleases(queue, mbs.pausedUntil, "mailbox paused")}})
		return nil
	}
	if ctx.Err() != nil || !t.opts.Now().Before(deadline) {
		// Stopping before this mailbox's turn: nothing was recorded.
		t.release(s, queue, func(r store.ClaimedEnrollment) time.Time { return r.DueAt }, "", nil)
		return nil
	}
	// No SMTP phase outlives the tick's deadline plus the grace; a signal
	// does not cut a message short.
	sendCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(TickSMTPGraceDefault))
	defer cancel()
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
		if err := s.Err(); err != nil {
			// Outcomes cannot be recorded: send nothing more.
			t.release(s, queue[i:], func(r store.ClaimedEnrollment) time.Time { return r.DueAt }, "", unsent(cur))
			return err
		}
		next = nil
		if i+1 < len(queue) {
			next = t.prepare(ctx, rec, mbs, queue[i+1])
		}
		r := cur.r
		switch {
		case cur.composeErr != nil:
			s.Add(outcome{kind: OutcomeFailed, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{ID: r.ID, Status: enrollment.Failed, CurrentStep: r.Step, NextSendAt: t.opts.Now(), Attempts: r.Attempts, LastError: cur.composeErr.Error()}}}})
			continue
		case cur.duplicate != 0:
			// Two leads with one address: the campaign mails it once.
			s.Add(outcome{kind: OutcomeDuplicate, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{
				ID: r.ID, Status: enrollment.Failed, CurrentStep: r.Step, NextSendAt: t.opts.Now(), Attempts: r.Attempts,
				LastError: fmt.Sprintf("duplicate address: enrollment %d of this campaign already mails %s", cur.duplicate, r.Email),
			}}}})
			continue
		case !cur.recorded:
			r.StepSend = enrollment.SendSending
			t.settleWithoutSending(s, r)
			continue
		}
		sendErr := t.opts.Mailer.Send(sendCtx, mbs.mb, cur.msg)
		if sendErr == nil {
			t.sent(s, t.campaign(r.CampaignID), r, mbs)
			continue
		}
		de := ClassifyDelivery(sendErr)
		t.opts.Logger.Warn("smtp delivery failed", "mailbox", mbs.mb.Address, "enrollment_id", r.ID, "step", r.Step,
			"kind", string(de.Kind), "code", de.Code, "enhanced", de.Enhanced, "phase", string(de.Phase), "error", sendErr.Error(), "tick_id", t.opts.TickID)
		if pause, _ := de.PausesMailbox(); pause {
			return t.pauseMailbox(ctx, mbs, de, queue[i:], next)
		}
		t.failed(s, r, mbs.id, de)
		if de.Code == 0 || de.Code == 421 {
			// No SMTP reply at all (connection refused, dropped, timed
			// out) or the server closing: do not hammer it with the rest
			// of the queue this tick.
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
	// duplicate is the enrollment that already holds this address in the
	// campaign; the message is not sent.
	duplicate int64
	err       error
	done      chan struct{}
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
		var res store.SendBegun
		res, p.err = rec.record(ctx, store.SendStart{EnrollmentID: r.ID, Step: r.Step, MailboxID: mbs.id, MessageID: p.msg.MessageID, CampaignID: r.CampaignID, Email: r.Email})
		p.recorded, p.duplicate = res.Written, res.Duplicate
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
	return []store.SendResult{{EnrollmentID: p.r.ID, Step: p.r.Step, Status: enrollment.SendFailed, Error: "not sent: the tick stopped this mailbox first"}}
}

func (t *emailTick) sent(s *tick.Batcher[outcome], c *Campaign, r store.ClaimedEnrollment, mbs *mailboxState) {
	now := t.opts.Now()
	u := store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step + 1, MailboxID: mbs.id, NextSendAt: now}
	kind := OutcomeSent
	if r.Step >= len(c.Steps) {
		u.Status, u.CurrentStep, kind = enrollment.Completed, r.Step, OutcomeCompleted
	} else {
		u.NextSendAt = c.Window.Next(now.Add(c.Steps[r.Step].Delay), r.Timezone)
	}
	s.Add(outcome{kind: kind, n: 1, mailbox: mbs.mb.Address, set: store.Settlement{
		Sends:       []store.SendResult{{EnrollmentID: r.ID, Step: r.Step, Status: enrollment.SendSent, SentAt: now, Metric: store.MetricSent}},
		Enrollments: []store.EnrollmentUpdate{u},
	}})
}

func (t *emailTick) failed(s *tick.Batcher[outcome], r store.ClaimedEnrollment, mailboxID int64, de *DeliveryError) {
	now := t.opts.Now()
	u := store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, Attempts: r.Attempts, LastError: de.Error()}
	res := store.SendResult{EnrollmentID: r.ID, Step: r.Step, Status: enrollment.SendFailed, Error: de.Error(), Metric: store.MetricFailed}
	o := outcome{n: 1}
	switch de.Kind {
	case DeliveryUnknown:
		// The server may have the message: never resent by a tick.
		u.Status, u.NextSendAt = enrollment.DeliveryUnknown, now
		u.LastError = fmt.Sprintf("step %d delivery unknown: %v; check the mailbox's Sent folder, then requeue --status=delivery_unknown or leave it", r.Step, de.Err)
		res.Status, res.Metric, o.kind = enrollment.SendDeliveryUnknown, store.MetricDeliveryUnknown, OutcomeDeliveryUnknown
	case DeliveryBounced:
		u.Status, u.NextSendAt = enrollment.Bounced, now
		o.set.Suppressions = []store.Suppression{{WorkspaceID: r.WorkspaceID, Email: r.Email, Reason: string(enrollment.Bounced)}}
		o.kind = OutcomeBounced
	case DeliveryRejected:
		u.Status, u.NextSendAt, o.kind = enrollment.Failed, now, OutcomeRejected
	default: // transient
		u.Attempts++
		u.NextSendAt = now.Add(TransientBackoff(u.Attempts))
		res.Metric, o.kind = store.MetricDeferred, OutcomeTransient
		if u.Attempts >= TransientAttemptsMaxDefault {
			u.Status, res.Metric, o.kind = enrollment.Failed, store.MetricFailed, OutcomeFailed
		}
	}
	o.set.Sends, o.set.Enrollments = []store.SendResult{res}, []store.EnrollmentUpdate{u}
	s.Add(o)
}

// release hands rows back untouched (no attempt counted), due at due(r).
func (t *emailTick) release(s *tick.Batcher[outcome], rows []store.ClaimedEnrollment, due func(store.ClaimedEnrollment) time.Time, why string, sends []store.SendResult) {
	if len(rows) == 0 {
		return
	}
	set := store.Settlement{Sends: sends}
	for _, r := range rows {
		set.Enrollments = append(set.Enrollments, store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, NextSendAt: due(r), Attempts: r.Attempts, LastError: why})
	}
	s.Add(outcome{kind: OutcomeReleased, n: len(rows), set: set})
}

// pauseMailbox pauses (or disables) a mailbox after its provider limited
// it, in one transaction: the mailbox row, a mailbox_paused event, the
// failed row and the rest of the queue released without an attempt, and the
// mailbox's unsent step-1 enrollments moved to healthy mailboxes. Follow-ups
// wait for the mailbox: their thread belongs to it.
func (t *emailTick) pauseMailbox(ctx context.Context, mbs *mailboxState, de *DeliveryError, rows []store.ClaimedEnrollment, next *prepared) error {
	now := t.opts.Now()
	_, d := de.PausesMailbox()
	var until *time.Time
	kind, paused := "mailbox_disabled", OutcomeMailboxDisabled
	if d > 0 {
		u := now.Add(d)
		until, kind, paused = &u, "mailbox_paused", OutcomeMailboxPaused
	}
	reason := fmt.Sprintf("%s: %v", de.Kind, de.Err)
	set := store.Settlement{
		Sends:       append([]store.SendResult{{EnrollmentID: rows[0].ID, Step: rows[0].Step, Status: enrollment.SendFailed, Error: de.Error(), Metric: store.MetricDeferred}}, unsent(next)...),
		Enrollments: t.pauseReleases(rows, until, reason),
	}
	counts := []outcome{{kind: paused, n: 1}, {kind: OutcomeReleased, n: len(rows) - 1}}
	if mbs == nil {
		// The mailbox row is gone: just release.
		return t.settle(ctx, []outcome{{set: set, kind: OutcomeReleased, n: len(rows)}})
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
	for _, c := range counts {
		t.countN(c.kind, c.n)
	}
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
		updates[i] = store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, NextSendAt: due, Attempts: r.Attempts, LastError: reason}
	}
	return updates
}

func (t *emailTick) countN(kind string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n > 0 {
		t.report.Outcomes[kind] += n
	}
}
