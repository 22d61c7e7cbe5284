package sequence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/faults"
	"github.com/rindactl/rindactl/internal/store"
)

// The claim/dispatch side of the email tick: a claimed batch is read
// (campaigns, mailboxes), planned by planBatch, and handed to one job per
// mailbox.

// dispatch starts sending one claimed batch: one job per mailbox (its
// messages go in order over one connection), started after the same
// mailbox's previous job (its lane), at most Concurrency mailboxes sending
// at once. A failure stops the run.
func (t *emailTick) dispatch(p *pipeline, seq int, rows []store.ClaimedEnrollment) error {
	began := time.Now()
	err := t.load(p.ctx, rows)
	t.clock.since(phaseClaim, began)
	if err != nil {
		// Loading failed before any row was worked: hand them all back.
		return errors.Join(err, t.releaseAll(p.ctx, rows))
	}
	plan := planBatch(rows, t.campaign, t.opts.Now())
	for _, o := range plan.settled {
		p.settler.Add(o)
	}
	for _, id := range plan.order {
		mbs, queue := t.mailboxes[id], plan.queues[id]
		prev, done := p.book.start(id, seq)
		p.jobs.Go(func() error {
			defer done()
			if prev != nil {
				<-prev
			}
			p.book.waitSlot(true)
			select {
			case t.slots <- struct{}{}:
				defer func() { <-t.slots }()
			case <-p.ctx.Done():
				// Stopping: the drain only releases its rows; it needs no slot.
			}
			p.book.waitSlot(false)
			began := time.Now()
			err := t.drain(p, mbs, queue)
			t.clock.since(phaseWorkers, began)
			if !p.book.queued(id) {
				handOff(p.settler, mbs)
			}
			return err
		})
	}
	return nil
}

// load reads the campaigns, workspace unsubscribe keys and mailboxes a
// batch needs, once per tick.
func (t *emailTick) load(ctx context.Context, rows []store.ClaimedEnrollment) error {
	var missing []int64
	l, grown := t.loaded.Load(), false
	grow := func() {
		if !grown {
			l, grown = l.clone(), true
		}
	}
	for _, r := range rows {
		if l.campaigns[r.CampaignID] == nil {
			rec, err := store.LoadCampaign(ctx, t.pool, r.CampaignID)
			if err != nil {
				return err
			}
			c, err := campaignFromRecord(rec)
			if err != nil {
				return err
			}
			c.SetUnsubscribeBase(t.opts.UnsubscribeBaseURL)
			grow()
			l.campaigns[r.CampaignID] = c
		}
		if _, haveKey := l.unsubKeys[r.WorkspaceID]; !haveKey {
			key, err := store.UnsubscribeKey(ctx, t.pool, r.WorkspaceID)
			if err != nil {
				return err
			}
			grow()
			l.unsubKeys[r.WorkspaceID] = key
		}
		if _, ok := t.mailboxes[r.MailboxID]; !ok {
			t.mailboxes[r.MailboxID] = nil
			missing = append(missing, r.MailboxID)
		}
	}
	if grown {
		t.loaded.Store(l)
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

// batchPlan is what a claimed batch becomes: outcomes for the rows that
// must not reach SMTP, and the others queued per mailbox.
type batchPlan struct {
	settled []outcome
	// order lists the mailboxes by their first row in the claim.
	order  []int64
	queues map[int64][]store.ClaimedEnrollment
}

// planBatch splits a claimed batch; campaign returns a row's campaign (as
// loaded by the tick). Each mailbox keeps its rows in claim order.
func planBatch(rows []store.ClaimedEnrollment, campaign func(id int64) *Campaign, now time.Time) batchPlan {
	p := batchPlan{queues: map[int64][]store.ClaimedEnrollment{}}
	for _, r := range rows {
		if o, ok := presendOutcome(r, campaign(r.CampaignID), now); ok {
			p.settled = append(p.settled, o)
			continue
		}
		if _, ok := p.queues[r.MailboxID]; !ok {
			p.order = append(p.order, r.MailboxID)
		}
		p.queues[r.MailboxID] = append(p.queues[r.MailboxID], r)
	}
	return p
}

// presendOutcome settles a claimed row of campaign c that must not reach
// SMTP: its step was left 'sending', its address is suppressed, its
// campaign has no such step any more, or its lead's window is shut now.
// False when the row may be sent.
func presendOutcome(r store.ClaimedEnrollment, c *Campaign, now time.Time) (outcome, bool) {
	switch {
	case r.StepSend != "":
		return leftSendingOutcome(r, now), true
	case r.Suppressed != "":
		status := enrollment.Failed
		if reason := enrollment.Status(r.Suppressed); reason == enrollment.Bounced || reason == enrollment.Unsubscribed {
			status = reason
		}
		return outcome{kind: OutcomeSuppressed, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{
			ID: r.ID, Status: status, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts,
			LastError: "address suppressed: " + r.Suppressed,
		}}}}, true
	case r.Step > len(c.Steps):
		// A re-import removed the remaining steps.
		return outcome{kind: OutcomeCompleted, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{ID: r.ID, Status: enrollment.Completed, CurrentStep: r.Step, NextSendAt: now}}}}, true
	}
	return windowOutcome(c.Window, r, now, nil)
}

// windowOutcome releases a row whose lead's window w is shut at now to the
// window's next opening: not sent, not failed, no attempt counted, and not
// overdue (it is due when the window opens). sends settles a 'sending' row
// already written for it. False while the window is open.
func windowOutcome(w *Window, r store.ClaimedEnrollment, now time.Time, sends func() []store.SendResult) (outcome, bool) {
	opens := w.Next(now, r.Timezone)
	if !opens.After(now) || faults.On(faults.Window) {
		return outcome{}, false
	}
	o := outcome{kind: OutcomeOutsideWindow, n: 1, set: store.Settlement{Enrollments: []store.EnrollmentUpdate{{
		ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, NextSendAt: opens, Attempts: r.Attempts,
	}}}}
	if sends != nil {
		o.set.Sends = sends()
	}
	return o, true
}

// leftSendingOutcome settles a step whose send is already recorded as
// r.StepSend. At-most-once: a crash between 'sending' and 'sent' leaves the
// delivery unknown, and an operator decides (docs/email.md).
func leftSendingOutcome(r store.ClaimedEnrollment, now time.Time) outcome {
	why := fmt.Sprintf("step %d delivery unknown: its send was left %q by a stopped tick; check the mailbox's Sent folder, then requeue --status=delivery_unknown or leave it", r.Step, r.StepSend)
	return outcome{kind: OutcomeUnknown, n: 1, set: store.Settlement{
		// Counted against the daily cap from now, when the server has had it
		// if it ever will.
		Sends: []store.SendResult{{EnrollmentID: r.ID, Step: r.Step, Status: enrollment.SendDeliveryUnknown, SentAt: now, Error: why, Metric: store.MetricDeliveryUnknown}},
		Enrollments: []store.EnrollmentUpdate{{
			ID: r.ID, Status: enrollment.DeliveryUnknown, CurrentStep: r.Step, NextSendAt: now, Attempts: r.Attempts, LastError: why,
		}}}}
}
