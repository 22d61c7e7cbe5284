package sequence

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

// The send side of the email tick: one mailbox's queue goes out in order
// over its connection. mailboxTurn, nextMove, preparedOutcome and
// afterFailure decide; drain and send only do the I/O.

// mailboxTurn is what a mailbox job does before sending anything.
type mailboxTurn int

const (
	turnSend mailboxTurn = iota
	// turnUnusable: the stored mailbox is gone or does not validate; it
	// pauses (a re-imported campaign file is picked up after the pause).
	turnUnusable
	// turnPaused: paused earlier in this tick; its rows were claimed ahead.
	turnPaused
	// turnRelease: the tick is stopping before this mailbox's turn.
	turnRelease
)

func turnOf(mbs *mailboxState, stopping bool) mailboxTurn {
	switch {
	case mbs == nil || mbs.err != nil:
		return turnUnusable
	case mbs.paused:
		return turnPaused
	case stopping:
		return turnRelease
	}
	return turnSend
}

// queueMove is what a mailbox's queue does before its next message.
type queueMove int

const (
	moveSend queueMove = iota
	// moveAbort: the message's 'sending' row could not be written; the
	// tick stops.
	moveAbort
	// moveRelease: the tick is stopping (signal or deadline); the rest is
	// released. A 'sending' row cut short by the signal was not written,
	// so it is released too.
	moveRelease
	// moveReleaseAbort: outcomes cannot be recorded; send nothing more,
	// release the rest and stop the tick.
	moveReleaseAbort
)

func nextMove(recordFailed, cancelled, outOfTime, unrecordable bool) queueMove {
	switch {
	case recordFailed && !cancelled:
		return moveAbort
	case cancelled || outOfTime:
		return moveRelease
	case unrecordable:
		return moveReleaseAbort
	}
	return moveSend
}

// failureMove is what a failed send means for the rest of the queue.
type failureMove int

const (
	// failLead: the lead's failure; the queue goes on.
	failLead failureMove = iota
	// failPause: the mailbox's failure; it is paused and its queue released.
	failPause
	// failBackOff: no SMTP reply at all (refused, dropped, timed out) or
	// the server closing (421): the rest waits a backoff rather than
	// hammer the server this tick.
	failBackOff
	// failRelease: the tick's deadline or a signal cut the session before
	// the final dot: neither the mailbox's failure nor the lead's; the
	// queue goes back due as before.
	failRelease
	// failCutAfterDot: the tick's deadline or a signal cut the session
	// waiting for the reply to the final dot: the step is delivery_unknown
	// (never resent), and the rest of the queue, never tried, goes back due
	// as before, with no error text.
	failCutAfterDot
)

func afterFailure(de *DeliveryError) failureMove {
	switch {
	case de.Kind == DeliveryCancelled:
		return failRelease
	case de.TickCut:
		return failCutAfterDot
	}
	if pause, _ := de.PausesMailbox(); pause {
		return failPause
	}
	if de.ConnLost() {
		return failBackOff
	}
	return failLead
}

// drain sends one mailbox's queue in order. A mailbox-level failure stops
// the queue: the mailbox gets one attempt per tick, the rest is released.
func (t *emailTick) drain(p *pipeline, mbs *mailboxState, queue []store.ClaimedEnrollment) error {
	ctx, s := p.ctx, p.settler
	switch turnOf(mbs, ctx.Err() != nil || !t.opts.Now().Before(p.deadline)) {
	case turnUnusable:
		return t.pauseMailbox(ctx, mbs, unusableMailbox(mbs, queue[0].MailboxID), queue, nil)
	case turnPaused:
		s.Add(outcome{kind: OutcomeReleased, n: len(queue), set: store.Settlement{Enrollments: pauseReleases(queue, mbs.pausedUntil, "mailbox paused", t.opts.Now())}})
		return nil
	case turnRelease:
		// Nothing was recorded for these rows.
		t.release(s, queue, dueAsBefore, "", nil)
		return nil
	}
	return t.send(p, mbs, queue)
}

// unusableMailbox is the failure that pauses a mailbox the tick cannot use.
func unusableMailbox(mbs *mailboxState, id int64) *DeliveryError {
	err := fmt.Errorf("mailbox %d cannot be used", id)
	if mbs != nil {
		err = fmt.Errorf("%w; fix the campaign file and import it again", mbs.err)
	}
	return &DeliveryError{Kind: DeliveryMailboxRefused, Err: err}
}

// send works the queue. While a message is on the wire, the next one is
// composed and its 'sending' row committed, carrying the outcomes of the
// messages before (sendingRecorder), so the database round trip and the
// rendering overlap SMTP. The mailbox then has at most two rows 'sending'
// at any moment: the message on the wire and the one prepared behind it.
func (t *emailTick) send(p *pipeline, mbs *mailboxState, queue []store.ClaimedEnrollment) error {
	ctx, s, rec, deadline := p.ctx, p.settler, p.recorder, p.deadline
	// No SMTP phase outlives the tick's deadline plus the grace. A signal
	// gives the message on the wire the same grace, then its connection is
	// closed: SIGTERM is honoured within about a second, whatever the
	// server does.
	sendCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(TickSMTPGraceDefault))
	defer cancel()
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(TickSMTPGraceDefault, cancel) })
	defer stopGrace()
	began := time.Now()
	if mbs.handedOff != nil {
		// The last job's outcomes went to the settle writer: they are
		// written before this job's first 'sending' row.
		<-mbs.handedOff
		mbs.handedOff = nil
	}
	next := t.prepare(rec, mbs, queue[0])
	for i := range queue {
		cur := next
		<-cur.done
		t.clock.since(phaseRecordWait, began)
		if until, ok := t.bouncePaused(mbs.id); ok {
			// The guard paused the mailbox after this tick's bounces.
			s.Add(outcome{kind: OutcomeReleased, n: len(queue) - i, set: store.Settlement{
				Sends: unsent(cur), Enrollments: pauseReleases(queue[i:], &until, "mailbox paused: too many hard bounces", t.opts.Now())}})
			return nil
		}
		settleErr := s.Err()
		switch nextMove(cur.err != nil, ctx.Err() != nil, !t.opts.Now().Before(deadline), settleErr != nil) {
		case moveAbort:
			return cur.err
		case moveRelease:
			t.release(s, queue[i:], dueAsBefore, "", unsent(cur))
			return nil
		case moveReleaseAbort:
			t.release(s, queue[i:], dueAsBefore, "", unsent(cur))
			return settleErr
		}
		next = nil
		if i+1 < len(queue) {
			next = t.prepare(rec, mbs, queue[i+1])
		}
		began = time.Now()
		if o, held := preparedOutcome(cur, t.opts.Now()); held {
			mbs.pending = append(mbs.pending, o)
			continue
		}
		// The window may have shut since the claim: checked again at the
		// last moment before SMTP.
		if o, shut := windowOutcome(t.campaign(cur.r.CampaignID).Window, cur.r, t.opts.Now(), func() []store.SendResult {
			return unsentBecause(cur, "not sent: the lead's sending window shut before its turn")
		}); shut {
			mbs.pending = append(mbs.pending, o)
			continue
		}
		if done, err := t.deliver(ctx, sendCtx, s, mbs, queue[i:], cur, next); done {
			return err
		}
		began = time.Now()
	}
	return nil
}

// deliver sends cur, the message of rows[0], and queues its outcome. done
// says the rest of the queue was handled too (released, or the mailbox
// paused); next is the message prepared after it.
func (t *emailTick) deliver(ctx, sendCtx context.Context, s *tick.Batcher[outcome], mbs *mailboxState, rows []store.ClaimedEnrollment, cur, next *prepared) (done bool, err error) {
	r := cur.r
	began := time.Now()
	sendErr := t.opts.Mailer.Send(sendCtx, mbs.mb, cur.msg)
	t.clock.since(phaseSMTP, began)
	if sendErr == nil {
		mbs.pending = append(mbs.pending, sentOutcome(t.campaign(r.CampaignID), r, mbs.id, mbs.mb.Address, t.opts.Now()))
		return false, nil
	}
	de := ClassifyDelivery(sendErr)
	move := afterFailure(de)
	t.logFailure(mbs, r, de, sendErr)
	switch move {
	case failRelease:
		t.release(s, rows, dueAsBefore, "", append(unsent(cur), unsent(next)...))
		return true, nil
	case failPause:
		return true, t.pauseMailbox(ctx, mbs, de, rows, next)
	}
	if o := failedOutcome(r, de, t.opts.Now()); o.bounced != 0 {
		// The bounce guard reads the mailbox's bounces once this is
		// written: the settle writer runs it. The lane's next message
		// waits for its verdict, so a bouncing mailbox sends at most one
		// message past its limit per tick, however fast the server
		// refuses (issue 39: four ticks claiming one mailbox together
		// sent 19-53 of 100 into a limit of 3).
		written := o.awaitWritten()
		t.settleLater(s, o)
		<-written
	} else {
		mbs.pending = append(mbs.pending, o)
	}
	switch move {
	case failBackOff:
		retry := t.opts.Now().Add(TransientBackoffBaseDefault)
		t.release(s, rows[1:], func(store.ClaimedEnrollment) time.Time { return retry }, "mailbox connection failed: "+de.Error(), unsent(next))
		return true, nil
	case failCutAfterDot:
		// The tick stops: the rest was never tried.
		t.release(s, rows[1:], dueAsBefore, "", unsent(next))
		return true, nil
	}
	return false, nil
}

// logFailure logs a failed send: a warning, unless the tick cut the
// session itself.
func (t *emailTick) logFailure(mbs *mailboxState, r store.ClaimedEnrollment, de *DeliveryError, sendErr error) {
	if de.TickCut {
		t.opts.Logger.Info("smtp session cut by the tick", "mailbox", mbs.mb.Address, "enrollment_id", r.ID, "step", r.Step,
			"kind", string(de.Kind), "phase", string(de.Phase), "error", sendErr.Error(), "tick_id", t.opts.TickID)
		return
	}
	t.opts.Logger.Warn("smtp delivery failed", "mailbox", mbs.mb.Address, "enrollment_id", r.ID, "step", r.Step,
		"kind", string(de.Kind), "code", de.Code, "enhanced", de.Enhanced, "phase", string(de.Phase), "error", sendErr.Error(), "tick_id", t.opts.TickID)
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

// prepare composes r's message and records its 'sending' row, with the
// mailbox's pending outcomes, off the worker's path: the worker sends the
// message before while this runs.
func (t *emailTick) prepare(rec *sendingRecorder, mbs *mailboxState, r store.ClaimedEnrollment) *prepared {
	p := &prepared{r: r, done: make(chan struct{})}
	carried := mbs.pending
	mbs.pending = nil
	go func() {
		defer close(p.done)
		p.msg, p.composeErr = t.compose(mbs, r)
		var start *store.SendStart
		if p.composeErr == nil {
			start = &store.SendStart{EnrollmentID: r.ID, Step: r.Step, MailboxID: mbs.id, MessageID: p.msg.MessageID, CampaignID: r.CampaignID, Email: r.Email, Holder: r.Holder}
		} else if len(carried) == 0 {
			return
		}
		var res store.SendBegun
		res, p.err = rec.record(start, carried)
		p.recorded, p.duplicate = res.Written, res.Duplicate
	}()
	return p
}

// compose renders r's message for the mailbox.
func (t *emailTick) compose(mbs *mailboxState, r store.ClaimedEnrollment) (*Message, error) {
	defer t.clock.since(phaseRender, time.Now())
	lead := Lead{FirstName: r.FirstName, LastName: r.LastName, Company: r.Company, Email: r.Email, Domain: r.Domain, UnsubscribeToken: t.unsubscribeToken(r)}
	if lead.Domain == "" {
		lead.Domain = r.Email[strings.LastIndexByte(r.Email, '@')+1:]
	}
	if _, err := address.Canonical(r.Email); err != nil {
		// Stored before addresses were checked at import (a bidi control,
		// a control character): never mailed.
		return nil, fmt.Errorf("the lead's address %q cannot be mailed: %w", r.Email, err)
	}
	return t.campaign(r.CampaignID).Compose(r.Step-1, lead, mbs.mb, NewMessageID(mbs.mb.Address), r.Thread)
}

// preparedOutcome settles a prepared message that must not go out: it
// could not be composed, another enrollment of the campaign mails its
// address, or its step already had a 'sending' row. False when it may be
// sent.
func preparedOutcome(p *prepared, now time.Time) (outcome, bool) {
	r := p.r
	switch {
	case p.composeErr != nil:
		return outcome{kind: OutcomeFailed, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{ID: r.ID, Status: enrollment.Failed, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts, LastError: p.composeErr.Error()}}}}, true
	case p.duplicate != 0:
		// Two leads with one address: the campaign mails it once.
		return outcome{kind: OutcomeDuplicate, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{
			ID: r.ID, Status: enrollment.Failed, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts,
			LastError: duplicateError(p.duplicate, r.Email),
		}}}}, true
	case !p.recorded:
		r.StepSend = enrollment.SendSending
		return leftSendingOutcome(r, now), true
	}
	return outcome{}, false
}

// duplicateError is the last_error of an enrollment whose address holder
// is another enrollment of the campaign; a negative holder is one a tick
// running at the same time claimed (committed after this tick looked).
func duplicateError(holder int64, email string) string {
	if holder < 0 {
		return "duplicate address: another enrollment of this campaign, in a tick running at the same time, mails " + email
	}
	return fmt.Sprintf("duplicate address: enrollment %d of this campaign already mails %s", holder, email)
}

// unsent settles a prepared message that will not go out after all: its
// 'sending' row becomes 'failed' (not delivered), so a retry takes it over.
func unsent(p *prepared) []store.SendResult {
	return unsentBecause(p, "not sent: the tick stopped this mailbox first")
}

// unsentBecause is unsent with the reason recorded on the sends row.
func unsentBecause(p *prepared, why string) []store.SendResult {
	if p == nil {
		return nil
	}
	<-p.done
	if !p.recorded {
		return nil
	}
	return []store.SendResult{{EnrollmentID: p.r.ID, Step: p.r.Step, Status: enrollment.SendFailed, Error: why}}
}
