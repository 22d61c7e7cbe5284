package sequence

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
)

// The settle side of the email tick and mailbox health: what each send's
// result writes (sentOutcome, failedOutcome, releaseOutcome, planPause,
// pauseReleases decide), and the grouped writes that record it.

// merge joins a group of outcomes' writes.
func merge(group []outcome) store.Settlement {
	var all store.Settlement
	for _, o := range group {
		all.Sends = append(all.Sends, o.set.Sends...)
		all.Enrollments = append(all.Enrollments, o.set.Enrollments...)
		all.Suppressions = append(all.Suppressions, o.set.Suppressions...)
	}
	return all
}

// settle writes a group of outcomes in one transaction, then counts them
// and runs the bounce guard for the mailboxes with a hard bounce among them.
// An outcome's written channel closes after the guard: a lane waiting on
// its bounce sends its next message only once the guard has judged it.
func (t *emailTick) settle(ctx context.Context, group []outcome) error {
	defer func() {
		for _, o := range group {
			if o.written != nil {
				close(o.written)
			}
		}
	}()
	began := time.Now()
	err := store.Settle(ctx, t.pool, t.opts.TickID, merge(group))
	t.clock.since(phaseSettle, began)
	if err != nil {
		return err
	}
	for _, id := range t.count(group) {
		if err := t.guardBounces(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// count adds a committed group of outcomes to the report and returns the
// mailboxes that had a hard bounce among them.
func (t *emailTick) count(group []outcome) (bounced []int64) {
	t.mu.Lock()
	for _, o := range group {
		if o.n > 0 {
			t.report.Outcomes[o.kind] += o.n
			if o.mailbox != "" {
				t.report.Sent += o.n
				t.report.ByMailbox[o.mailbox] += o.n
			}
		}
		if o.bounced != 0 && !slices.Contains(bounced, o.bounced) {
			bounced = append(bounced, o.bounced)
		}
	}
	t.mu.Unlock()
	return bounced
}

// guardBounces pauses a mailbox whose hard bounces reached its limits
// (GuardBounces); the rest of its queue in this tick is then released
// (bouncePaused).
func (t *emailTick) guardBounces(ctx context.Context, mailboxID int64) error {
	halt, err := GuardBounces(ctx, t.pool, mailboxID, t.opts.Now(), t.opts.TickID)
	if err != nil || !halt.Halt {
		return err
	}
	t.mu.Lock()
	t.bounceHalts[mailboxID] = halt.Until
	t.mu.Unlock()
	if halt.PausedHere {
		t.opts.Logger.Warn("mailbox paused: too many hard bounces", "mailbox_id", mailboxID, "paused_until", halt.Until, "tick_id", t.opts.TickID)
	}
	return nil
}

// bouncePaused says whether the bounce-rate guard paused the mailbox in
// this tick, and until when.
func (t *emailTick) bouncePaused(mailboxID int64) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	until, ok := t.bounceHalts[mailboxID]
	return until, ok
}

// handOff gives the mailbox's pending outcomes to the settle writer when
// no job of the mailbox follows to carry them; handedOff tells when they
// are written. Only the mailbox's lane calls it.
func handOff(s *tick.Batcher[outcome], mbs *mailboxState) {
	if mbs == nil || len(mbs.pending) == 0 {
		return
	}
	// The writer keeps arrival order: the last one written, all are.
	written := mbs.pending[len(mbs.pending)-1].awaitWritten()
	for _, o := range mbs.pending {
		s.Add(o)
	}
	mbs.pending, mbs.handedOff = nil, written
}

// awaitWritten returns the channel settle closes once o is written and
// the bounce guard has judged it: the one way a lane waits for an outcome
// to be durable (a hard bounce's verdict, a hand-off to the next job).
func (o *outcome) awaitWritten() <-chan struct{} {
	o.written = make(chan struct{})
	return o.written
}

// settleLater hands a mailbox worker's outcome to the settle writer.
func (t *emailTick) settleLater(s *tick.Batcher[outcome], o outcome) {
	defer t.clock.since(phaseSettleWait, time.Now())
	s.Add(o)
}

func (t *emailTick) countN(kind string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n > 0 {
		t.report.Outcomes[kind] += n
	}
}

// sentOutcome records step r.Step of campaign c sent by the mailbox at
// now: the next step is scheduled inside the window, or the enrollment
// completes.
func sentOutcome(c *Campaign, r store.ClaimedEnrollment, mailboxID int64, address string, now time.Time) outcome {
	u := store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step + 1, MailboxID: mailboxID, NextSendAt: now}
	kind := OutcomeSent
	if r.Step >= len(c.Steps) {
		u.Status, u.CurrentStep, kind = enrollment.Completed, r.Step, OutcomeCompleted
	} else {
		u.NextSendAt = c.Window.Next(now.Add(c.Steps[r.Step].Delay), r.Timezone)
	}
	return outcome{kind: kind, n: 1, mailbox: address, set: store.Settlement{
		Sends:       []store.SendResult{{EnrollmentID: r.ID, Step: r.Step, Status: enrollment.SendSent, SentAt: now, Metric: store.MetricSent}},
		Enrollments: []store.EnrollmentUpdate{u},
	}}
}

// failedOutcome records a send that failed for the lead's reasons (not the
// mailbox's).
func failedOutcome(r store.ClaimedEnrollment, de *DeliveryError, now time.Time) outcome {
	u := store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, Attempts: r.Attempts, LastError: de.Error()}
	res := store.SendResult{EnrollmentID: r.ID, Step: r.Step, Status: enrollment.SendFailed, Error: de.Error(), Metric: store.MetricFailed}
	o := outcome{n: 1}
	switch de.Kind {
	case DeliveryUnknown:
		// The server may have the message: never resent by a tick.
		u.Status, u.NextSendAt = enrollment.DeliveryUnknown, now
		u.LastError = fmt.Sprintf("step %d delivery unknown: %v; check the mailbox's Sent folder, then requeue --status=delivery_unknown or leave it", r.Step, de.Err)
		res.Status, res.Metric, o.kind = enrollment.SendDeliveryUnknown, store.MetricDeliveryUnknown, OutcomeDeliveryUnknown
		// The server may have had it until now: the daily cap counts it
		// from here (email_claim.sql).
		res.SentAt = now
	case DeliveryBounced:
		u.Status, u.NextSendAt = enrollment.Bounced, now
		o.set.Suppressions = []store.Suppression{{WorkspaceID: r.WorkspaceID, Email: r.Email, Reason: string(enrollment.Bounced)}}
		res.Bounced = true
		o.kind, o.bounced = OutcomeBounced, r.MailboxID
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
	return o
}

// dueAsBefore keeps a released row's due time.
func dueAsBefore(r store.ClaimedEnrollment) time.Time { return r.DueAt }

// releaseOutcome hands rows back untouched (no attempt counted), due at
// due(r), with sends settled alongside.
func releaseOutcome(rows []store.ClaimedEnrollment, due func(store.ClaimedEnrollment) time.Time, why string, sends []store.SendResult) outcome {
	set := store.Settlement{Sends: sends}
	for _, r := range rows {
		set.Enrollments = append(set.Enrollments, store.EnrollmentUpdate{ID: r.ID, Status: enrollment.Active, CurrentStep: r.Step, NextSendAt: due(r), Attempts: r.Attempts, LastError: why})
	}
	return outcome{kind: OutcomeReleased, n: len(rows), set: set}
}

// release queues releaseOutcome; no rows, nothing to write.
func (t *emailTick) release(s *tick.Batcher[outcome], rows []store.ClaimedEnrollment, due func(store.ClaimedEnrollment) time.Time, why string, sends []store.SendResult) {
	if len(rows) == 0 {
		return
	}
	s.Add(releaseOutcome(rows, due, why, sends))
}

// releaseAll hands rows claimed ahead back, due as before.
func (t *emailTick) releaseAll(ctx context.Context, rows []store.ClaimedEnrollment) error {
	if len(rows) == 0 {
		return nil
	}
	return t.settle(context.WithoutCancel(ctx), []outcome{releaseOutcome(rows, dueAsBefore, "", nil)})
}

// mailboxPause is what pausing a mailbox writes.
type mailboxPause struct {
	until time.Time
	// reason is the kind and the server's reply (or the local cause): the
	// mailbox's pause_reason, the rows' last_error and the event's reason.
	reason string
	// episode keys the event so one pause is delivered once.
	episode string
	set     store.Settlement
}

// planPause decides a mailbox's pause after de failed rows[0] at now: how
// long, the failed send (and the prepared one, unsent), and the queue
// released by pauseReleases.
func planPause(de *DeliveryError, rows []store.ClaimedEnrollment, unsent []store.SendResult, now time.Time) mailboxPause {
	p := newPause(de, now)
	p.set = store.Settlement{
		Sends:       append([]store.SendResult{{EnrollmentID: rows[0].ID, Step: rows[0].Step, Status: enrollment.SendFailed, Error: de.Error(), Metric: store.MetricDeferred}}, unsent...),
		Enrollments: pauseReleases(rows, &p.until, p.reason, now),
	}
	return p
}

// pauseMailbox pauses a mailbox its server (or this host) cannot send
// from for now, in one transaction: the mailbox row, a mailbox_paused
// event naming the reply, the failed row and the rest of the queue
// released without an attempt, and the mailbox's unsent step-1
// enrollments moved to healthy mailboxes. Follow-ups wait for the
// mailbox: their thread belongs to it. The tick never disables a
// mailbox: whatever an operator fixes is picked up after the pause.
func (t *emailTick) pauseMailbox(ctx context.Context, mbs *mailboxState, de *DeliveryError, rows []store.ClaimedEnrollment, next *prepared) error {
	p := planPause(de, rows, unsent(next), t.opts.Now())
	if mbs == nil {
		// The mailbox row is gone: just release.
		return t.settle(ctx, []outcome{{set: p.set, kind: OutcomeReleased, n: len(rows)}})
	}
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		return pauseInTx(ctx, tx, mbs.id, de, p, t.opts.TickID)
	})
	if err != nil {
		return fmt.Errorf("pause mailbox %s: %w", mbs.mb.Address, err)
	}
	mbs.paused, mbs.pausedUntil = true, &p.until
	t.opts.Logger.Warn("mailbox paused", "mailbox", mbs.mb.Address, "kind", string(de.Kind), "paused_until", p.until, "released", len(rows), "tick_id", t.opts.TickID)
	t.countN(OutcomeMailboxPaused, 1)
	t.countN(OutcomeReleased, len(rows)-1)
	return nil
}

// newPause is de's pause from now: its end, reason and episode.
func newPause(de *DeliveryError, now time.Time) mailboxPause {
	_, d := de.PausesMailbox()
	p := mailboxPause{until: now.Add(d), reason: fmt.Sprintf("%s: %v", de.Kind, de.Err)}
	p.episode = strconv.FormatInt(p.until.Unix(), 10)
	return p
}

// pauseInTx pauses the mailbox for de in tx: the mailbox row, its event,
// the pause's rows settled (p.set), then its unsent step-1 enrollments,
// those just released among them, moved to healthy mailboxes.
func pauseInTx(ctx context.Context, tx pgx.Tx, mailboxID int64, de *DeliveryError, p mailboxPause, tickID string) error {
	workspaceID, address, err := store.PauseMailbox(ctx, tx, mailboxID, p.until, p.reason)
	if err != nil {
		return err
	}
	// The reason is stored cut and redacted (store.InsertEvent redacts
	// the payload again): a server's echo of the password never reaches
	// an event.
	payload := map[string]any{"address": address, "kind": string(de.Kind), "code": de.Code, "enhanced": de.Enhanced,
		"reason": redact.Stored(p.reason), "paused_until": p.until, "tick_id": tickID}
	kind, key := pauseEvent(de, mailboxID, p.episode)
	if err := store.InsertEvent(ctx, tx, store.MailboxEvent{Kind: kind, WorkspaceID: workspaceID, MailboxID: mailboxID, DedupeKey: key, Payload: payload}); err != nil {
		return err
	}
	if err := store.Settle(ctx, tx, tickID, p.set); err != nil {
		return err
	}
	return rebindMailboxCampaigns(ctx, tx, mailboxID, tickID)
}

// PauseMailboxFor pauses a mailbox that de says cannot be used for now
// (de.PausesMailbox), as the email tick does, for a command holding none
// of its rows: the inbox tick meeting a revoked OAuth2 grant. It returns
// the pause's end.
func PauseMailboxFor(ctx context.Context, pool *pgxpool.Pool, mailboxID int64, de *DeliveryError, now time.Time, tickID string) (time.Time, error) {
	p := newPause(de, now)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return pauseInTx(ctx, tx, mailboxID, de, p, tickID)
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("pause mailbox %d: %w", mailboxID, err)
	}
	return p.until, nil
}

// rebindMailboxCampaigns moves the unsent step-1 enrollments of a paused
// mailbox's campaigns to healthy mailboxes.
func rebindMailboxCampaigns(ctx context.Context, tx pgx.Tx, mailboxID int64, tickID string) error {
	campaigns, err := store.MailboxCampaigns(ctx, tx, mailboxID)
	if err != nil {
		return err
	}
	if err := store.LockCampaigns(ctx, tx, campaigns); err != nil {
		return err
	}
	for _, id := range campaigns {
		if _, err := rebindOrphans(ctx, tx, id, tickID); err != nil {
			return err
		}
	}
	return nil
}

// pauseReleases hands a paused mailbox's rows back without an attempt:
// step-1 rows are due now (rebinding moves them to a healthy mailbox),
// follow-ups wait for their own mailbox's pause to end.
func pauseReleases(rows []store.ClaimedEnrollment, until *time.Time, reason string, now time.Time) []store.EnrollmentUpdate {
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
