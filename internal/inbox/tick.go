package inbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// Defaults of `rindactl inbox tick`.
const (
	TickBatchDefault       = 200 // messages read per mailbox per tick
	TickMaxDurationDefault = 50 * time.Second
	TickLeaseDefault       = 5 * time.Minute
	// chunkSize messages are fetched, acted on and checkpointed together.
	chunkSize = 25
	// sessionGraceDefault is how long an IMAP session may outlast
	// --max-duration: a chunk in flight finishes, a hung server does not
	// hold the tick.
	sessionGraceDefault = 10 * time.Second
)

// Tick outcomes, as counted in TickReport.Outcomes.
const (
	OutcomeReplied      = string(enrollment.Replied) // a sequence ended by a reply
	OutcomeBounced      = string(enrollment.Bounced) // a sequence ended by a bounce
	OutcomeSuppressed   = "suppressed"               // an address newly suppressed by a hard bounce
	OutcomeAlreadyEnded = "already_ended"            // the reply or bounce concerned an ended sequence
	OutcomeUnmatched    = "unmatched"                // a reply or bounce to no message of ours
	OutcomeAutoReply    = "auto_reply"
	OutcomeDelayed      = "delayed"
	OutcomeOther        = "other"
	OutcomeMailboxError = "mailbox_error" // the mailbox could not be read
	// OutcomeUnsubscribed counts List-Unsubscribe mails whose token was
	// used (its address suppressed, its sequences ended).
	OutcomeUnsubscribed = string(enrollment.Unsubscribed)
)

// TickOptions configures one inbox tick.
type TickOptions struct {
	Batch       int
	MaxDuration time.Duration
	Lease       time.Duration
	TickID      string
	// LookupEnv reads the mailbox's password_env.
	LookupEnv func(string) (string, bool)
	// TLSConfig overrides the TLS settings (tests trust their own CA); nil
	// verifies the server against the system roots.
	TLSConfig *tls.Config
	Logger    *slog.Logger
	Now       func() time.Time
}

// TickReport is what an inbox tick did.
type TickReport struct {
	TickID     string         `json:"tick_id"`
	Mailboxes  int            `json:"mailboxes"`
	Messages   int            `json:"messages"`
	Outcomes   map[string]int `json:"outcomes"`
	DurationMS int64          `json:"duration_ms"`
}

// RunTick reads each mailbox with an imap_url once, from its checkpoint on,
// at most Batch messages each, until every mailbox is read or MaxDuration
// is reached; it ends the sequences the messages answer and writes a
// tick_runs row. A mailbox that cannot be read is recorded on its
// checkpoint and fails the tick (exit 1) after the others were read.
func RunTick(ctx context.Context, pool *pgxpool.Pool, opts TickOptions) (*TickReport, error) {
	opts = opts.withDefaults()
	start := opts.Now()
	rep := &TickReport{TickID: opts.TickID, Outcomes: map[string]int{}}
	run, err := tick.Start(ctx, pool, tickkind.Inbox, opts.TickID)
	if err != nil {
		return nil, err
	}
	t := &inboxTick{pool: pool, opts: opts, report: rep, deadline: start.Add(opts.MaxDuration)}
	err = t.run(ctx, run.Started)
	rep.DurationMS = opts.Now().Sub(start).Milliseconds()
	res := tick.Result{Claimed: rep.Mailboxes, Counts: rep.Outcomes, Err: err}
	if err != nil {
		res.ExitStatus = 1
	}
	if ferr := run.Finish(ctx, res); ferr != nil && err == nil {
		err = ferr
	}
	return rep, err
}

func (o TickOptions) withDefaults() TickOptions {
	tick.Defaults(&o, TickOptions{
		Batch: TickBatchDefault, MaxDuration: TickMaxDurationDefault, Lease: TickLeaseDefault,
		Now: time.Now, Logger: slog.New(slog.DiscardHandler), TickID: tick.NewID(),
		LookupEnv: func(string) (string, bool) { return "", false },
	})
	return o
}

type inboxTick struct {
	pool     *pgxpool.Pool
	opts     TickOptions
	report   *TickReport
	deadline time.Time
}

func (t *inboxTick) run(ctx context.Context, started time.Time) error {
	var failed []error
	for ctx.Err() == nil && t.opts.Now().Before(t.deadline) {
		cp, ok, err := store.ClaimInbox(ctx, t.pool, started, t.opts.Lease, t.opts.TickID)
		if err != nil {
			return errors.Join(append(failed, err)...)
		}
		if !ok {
			break
		}
		t.report.Mailboxes++
		if err := t.readMailbox(ctx, cp); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// readMailbox reads one leased mailbox from its checkpoint and releases it.
func (t *inboxTick) readMailbox(ctx context.Context, cp store.InboxCheckpoint) error {
	// Never cancelled mid-write: a signal still records how far we got.
	saveCtx := context.WithoutCancel(ctx)
	address := fmt.Sprintf("mailbox %d", cp.MailboxID)
	err := t.read(ctx, &cp, &address)
	if err != nil {
		if cause := t.cut(ctx); cause != "" {
			// Told to stop (SIGTERM) or out of time: what was read is
			// recorded, the rest waits for the next tick. Not the
			// mailbox's failure.
			t.opts.Logger.Info("inbox read stopped by the tick", "mailbox", address, "cause", cause, "error", err.Error(), "tick_id", t.opts.TickID)
			err = nil
		}
	}
	lastError := ""
	if err != nil {
		// A server's NO may repeat the password: hidden in every form.
		err = redact.Error(fmt.Errorf("inbox of %s: %w", address, err))
		lastError = err.Error()
		t.report.Outcomes[OutcomeMailboxError]++
		t.opts.Logger.Warn("inbox read failed", "mailbox", address, "error", lastError, "tick_id", t.opts.TickID)
	}
	return errors.Join(err, store.SaveInboxCheckpoint(saveCtx, t.pool, cp, lastError, t.opts.TickID, true))
}

func (t *inboxTick) read(ctx context.Context, cp *store.InboxCheckpoint, address *string) error {
	recs, err := store.Mailboxes(ctx, t.pool, []int64{cp.MailboxID})
	if err != nil || len(recs) == 0 {
		return errors.Join(errors.New("mailbox row is gone"), err)
	}
	*address = recs[0].Address
	mb, err := sequence.MailboxFromRecord(recs[0])
	if err != nil {
		return err
	}
	if mb.IMAP == nil {
		return nil // imap_url removed since the claim
	}
	password, ok := t.opts.LookupEnv(mb.PasswordEnv)
	if !ok || password == "" {
		return fmt.Errorf("environment variable %s is not set; it holds the mailbox password", mb.PasswordEnv)
	}
	redact.Register(password)
	// The session ends at its deadline even if the server keeps it busy.
	end := t.sessionEnd()
	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	r, err := dial(ctx, *mb.IMAP, password, t.opts.TLSConfig, end)
	if err != nil {
		return err
	}
	defer r.close()
	if r.uidValidity != cp.UIDValidity {
		// A new UIDVALIDITY renumbered the INBOX: read it again from the
		// start; acting on a message twice changes nothing.
		if cp.UIDValidity != 0 {
			t.opts.Logger.Info("inbox UIDVALIDITY changed; reading it again", "mailbox", mb.Address, "tick_id", t.opts.TickID)
		}
		cp.UIDValidity, cp.LastUID = r.uidValidity, 0
	}
	uids, err := r.newUIDs(cp.LastUID, t.opts.Batch)
	if err != nil {
		return err
	}
	for len(uids) > 0 && ctx.Err() == nil && t.opts.Now().Before(t.deadline) {
		chunk := uids[:min(chunkSize, len(uids))]
		uids = uids[len(chunk):]
		msgs, err := r.fetch(chunk)
		if err != nil {
			return err
		}
		if err := t.act(context.WithoutCancel(ctx), cp, msgs, chunk[len(chunk)-1]); err != nil {
			return err
		}
	}
	return nil
}

// sessionEnd is when every IMAP session of the tick ends: a chunk in flight
// at the deadline may finish, a hung server does not hold the tick.
func (t *inboxTick) sessionEnd() time.Time {
	return t.deadline.Add(min(sessionGraceDefault, t.opts.Lease-t.opts.MaxDuration))
}

// cut names why the tick itself ended a session that failed (its signal,
// its session end), or "" when the mailbox failed it.
func (t *inboxTick) cut(ctx context.Context) string {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx).Error()
	case !time.Now().Before(t.sessionEnd()):
		return "the tick's deadline passed (--max-duration plus the session grace)"
	}
	return ""
}

// act ends the sequences a chunk of messages answers and moves the
// checkpoint past it, in one transaction.
func (t *inboxTick) act(ctx context.Context, cp *store.InboxCheckpoint, msgs []fetched, lastUID uint32) error {
	counts := map[string]int{}
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		clear(counts)
		for _, m := range msgs {
			if err := act(ctx, tx, cp.MailboxID, Classify(m.raw), counts); err != nil {
				return fmt.Errorf("message UID %d: %w", m.uid, err)
			}
		}
		next := *cp
		next.LastUID = lastUID
		return store.SaveInboxCheckpoint(ctx, tx, next, "", t.opts.TickID, false)
	})
	if err != nil {
		return err
	}
	cp.LastUID = lastUID
	t.report.Messages += len(msgs)
	for k, v := range counts {
		t.report.Outcomes[k] += v
	}
	return nil
}

func act(ctx context.Context, tx pgx.Tx, mailboxID int64, f Finding, counts map[string]int) error {
	var status enrollment.Status
	var suppress, outcome string
	switch f.Kind {
	case KindReply:
		status, outcome = enrollment.Replied, OutcomeReplied
	case KindBounce:
		status, outcome = enrollment.Bounced, OutcomeBounced
		if f.Hard {
			suppress = string(enrollment.Bounced)
		}
	case KindAutoReply:
		counts[OutcomeAutoReply]++
		return nil
	case KindDelayed:
		counts[OutcomeDelayed]++
		return nil
	case KindUnsubscribeMail:
		return actUnsubscribe(ctx, tx, f.UnsubscribeToken, counts)
	default:
		counts[OutcomeOther]++
		return nil
	}
	ids, err := store.InboxEnrollments(ctx, tx, mailboxID, f.MessageIDs, f.Recipients)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		counts[OutcomeUnmatched]++
		return nil
	}
	m, err := store.MarkEnrollments(ctx, tx, ids, status, suppress)
	if err != nil {
		return err
	}
	for k, n := range map[string]int64{outcome: m.Marked, OutcomeAlreadyEnded: m.Found - m.Marked, OutcomeSuppressed: m.Suppressed} {
		if n > 0 {
			counts[k] += int(n)
		}
	}
	return nil
}

// actUnsubscribe uses the token of a List-Unsubscribe mail, in a savepoint
// so that a token whose enrollment vanished meanwhile cannot abort the
// chunk. A bad token counts as unmatched, a used one as already ended.
func actUnsubscribe(ctx context.Context, tx pgx.Tx, token string, counts map[string]int) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	res, err := unsubscribe.Apply(ctx, sp, token, unsubscribe.ViaMailto)
	switch {
	case errors.Is(err, unsubscribe.ErrBadToken):
		counts[OutcomeUnmatched]++
		return sp.Rollback(ctx)
	case errors.Is(err, unsubscribe.ErrReplayed):
		counts[OutcomeAlreadyEnded]++
		return sp.Rollback(ctx)
	case err != nil:
		_ = sp.Rollback(ctx)
		return err
	}
	counts[OutcomeUnsubscribed]++
	if res.Suppressed {
		counts[OutcomeSuppressed]++
	}
	return sp.Commit(ctx)
}
