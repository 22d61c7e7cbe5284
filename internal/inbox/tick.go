package inbox

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	// TickSessionGraceDefault is how long an IMAP session may outlast
	// --max-duration, as an SMTP session may (sequence.TickSMTPGraceDefault):
	// a message cut short is read again by the next tick. The lease must
	// outlast both (tick.FitLease).
	TickSessionGraceDefault = time.Second
	// leaseMarginMax bounds what a session leaves of its mailbox's lease
	// for the writes after it (a fifth of the lease, at most this).
	leaseMarginMax = 10 * time.Second
	// bounceRecipientWindow is how far back an unproven report's recipients
	// are looked up among the mailbox's sends, to say how many it never
	// mailed (they prove nothing either way).
	bounceRecipientWindow = 30 * 24 * time.Hour
	// suspiciousRecipientsMax: an unproven delivery report naming more
	// addresses the mailbox never mailed raises an inbox_suspicious alert.
	suspiciousRecipientsMax = 5
	// unmatchedListedMax bounds the unmatched reports a tick's report lists
	// (its outcomes count them all).
	unmatchedListedMax = 100
	// skipReasonMax bounds a skipped message's stored reason.
	skipReasonMax = 500
)

// Tick outcomes, as counted in TickReport.Outcomes.
const (
	OutcomeReplied = string(enrollment.Replied) // a sequence ended by a reply
	// OutcomeUnsubscribed counts sequences ended by a reply asking to stop,
	// and List-Unsubscribe mails whose token was used (its address
	// suppressed, its sequences ended).
	OutcomeUnsubscribed = string(enrollment.Unsubscribed)
	OutcomeBounced      = string(enrollment.Bounced) // a sequence ended by a bounce
	OutcomeSuppressed   = "suppressed"               // an address newly suppressed (hard bounce, unsubscribe)
	OutcomeAlreadyEnded = "already_ended"            // the reply or bounce concerned an ended sequence
	// OutcomeUnmatched: a reply to no message of ours, or a delivery report
	// (or some of the recipients it names) that proved nothing of ours.
	OutcomeUnmatched = "unmatched"
	// OutcomeAutoReply: out of office, challenge-response, list or bulk
	// mail (isAutoReply); it ends nothing.
	OutcomeAutoReply = "auto_reply"
	OutcomeDelayed   = "delayed"
	OutcomeOther     = "other"
	// OutcomeSuspicious: an unproven delivery report naming more than a
	// handful of addresses the mailbox never mailed: unmatched, and an
	// inbox_suspicious event.
	OutcomeSuspicious = "suspicious"
	// OutcomeSkipped: a message that could not be processed; recorded with
	// its UID and reason, and the checkpoint moved past it.
	OutcomeSkipped = "skipped"
	// OutcomeMailboxPaused: the bounces read paused the mailbox
	// (sequence.GuardBounces), or its OAuth2 grant was revoked.
	OutcomeMailboxPaused = "mailbox_paused"
	// OutcomeSessionCut: a session reached the tick's deadline (or its
	// lease) before the mailbox was read; the rest waits for the next tick.
	OutcomeSessionCut   = "session_cut"
	OutcomeMailboxError = "mailbox_error" // the mailbox could not be read
)

// TickOptions configures one inbox tick.
type TickOptions struct {
	Batch       int
	MaxDuration time.Duration
	Lease       time.Duration
	TickID      string
	// LookupEnv reads the mailbox's password_env.
	LookupEnv func(string) (string, bool)
	// Tokens hands out oauth2 mailboxes' access tokens; nil: only
	// password mailboxes can be read.
	Tokens sequence.OAuthTokens
	// TLSConfig overrides the TLS settings (tests trust their own CA); nil
	// verifies the server against the system roots.
	TLSConfig *tls.Config
	Logger    *slog.Logger
	Now       func() time.Time
}

// TickReport is what an inbox tick did.
type TickReport struct {
	TickID    string         `json:"tick_id"`
	Mailboxes int            `json:"mailboxes"`
	Messages  int            `json:"messages"`
	Outcomes  map[string]int `json:"outcomes"`
	// Skipped lists the messages that could not be processed.
	Skipped []SkippedMessage `json:"skipped"`
	// Unmatched lists the delivery reports that proved nothing of ours
	// (the first unmatchedListedMax).
	Unmatched  []SkippedMessage `json:"unmatched"`
	DurationMS int64            `json:"duration_ms"`
}

// SkippedMessage is a message the tick recorded as skipped, or as an
// unmatched delivery report.
type SkippedMessage struct {
	Mailbox string `json:"mailbox"`
	UID     uint32 `json:"uid"`
	Reason  string `json:"reason"`
}

// RunTick reads each mailbox with an imap_url once, from its checkpoint on,
// at most Batch messages each, until every mailbox is read or MaxDuration
// is reached; it ends the sequences the messages answer and writes a
// tick_runs row. A mailbox that cannot be read is recorded on its
// checkpoint and fails the tick (exit 1) after the others were read.
func RunTick(ctx context.Context, pool *pgxpool.Pool, opts TickOptions) (*TickReport, error) {
	opts = opts.withDefaults()
	start := opts.Now()
	rep := &TickReport{TickID: opts.TickID, Outcomes: map[string]int{}, Skipped: []SkippedMessage{}, Unmatched: []SkippedMessage{}}
	ran, err := tick.Run(ctx, pool, tick.Spec{Kind: tickkind.Inbox, ID: opts.TickID}, func(ctx context.Context, started time.Time) tick.Outcome {
		t := &inboxTick{pool: pool, opts: opts, report: rep, start: start, deadline: start.Add(opts.MaxDuration)}
		err := t.run(ctx, started)
		rep.DurationMS = opts.Now().Sub(start).Milliseconds()
		// t.run already tells a stop (nil) from a mailbox it failed to
		// read: what it returns stands.
		return tick.Outcome{Claimed: rep.Mailboxes, Counts: rep.Outcomes, Err: err, Unsettled: err != nil}
	})
	if !ran && err != nil {
		return nil, err // no start recorded: nothing to report
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
	pool   *pgxpool.Pool
	opts   TickOptions
	report *TickReport
	// start is when the tick started (its hour keys the
	// inbox_suspicious alerts), deadline when it stops reading.
	start, deadline time.Time
}

// mailbox is what acting on a mailbox's messages needs to know of it.
type mailbox struct {
	id, workspaceID int64
	address         string
	// verpSecret checks VERP return paths, also of a mailbox that has
	// turned VERP off since (its earlier messages still bounce).
	verpSecret []byte
}

func (t *inboxTick) run(ctx context.Context, started time.Time) error {
	var failed []error
	for ctx.Err() == nil && t.opts.Now().Before(t.deadline) {
		claimed := t.opts.Now()
		cp, ok, err := store.ClaimInbox(ctx, t.pool, started, t.opts.Lease, t.opts.TickID)
		if err != nil {
			// A signal here falls between two mailboxes: nothing is half-read.
			return errors.Join(append(failed, tick.CleanStop(err))...)
		}
		if !ok {
			break
		}
		t.report.Mailboxes++
		if err := t.readMailbox(ctx, cp, claimed); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// sessionEnd is when the IMAP session of a mailbox claimed at claimed must
// end: shortly after the tick's deadline, and early enough in the lease
// that what it read is recorded before another tick may lease the mailbox.
func (t *inboxTick) sessionEnd(claimed time.Time) time.Time {
	leaseEnd := claimed.Add(t.opts.Lease - min(t.opts.Lease/5, leaseMarginMax))
	if end := t.deadline.Add(TickSessionGraceDefault); end.Before(leaseEnd) {
		return end
	}
	return leaseEnd
}

// readMailbox reads one leased mailbox from its checkpoint and releases it.
func (t *inboxTick) readMailbox(ctx context.Context, cp store.InboxCheckpoint, claimed time.Time) error {
	// Never cancelled mid-write: a signal still records how far we got.
	saveCtx := context.WithoutCancel(ctx)
	address := fmt.Sprintf("mailbox %d", cp.MailboxID)
	err := t.read(ctx, &cp, &address, t.sessionEnd(claimed))
	switch {
	case err != nil && ctx.Err() != nil:
		// Told to stop (SIGTERM): what was read is recorded, the rest
		// waits for the next tick. Not the mailbox's failure.
		t.opts.Logger.Info("inbox read stopped by the tick", "mailbox", address, "cause", context.Cause(ctx).Error(), "error", redact.String(err.Error()), "tick_id", t.opts.TickID)
		err = nil
	case errors.Is(err, errSessionEnded):
		// The tick's own deadline (or the lease) cut the session: the
		// server is slow, not failing; the next tick goes on from here.
		t.opts.Logger.Info("inbox read stopped by the tick", "mailbox", address, "cause", "the session's end passed (--max-duration plus 1s, or the lease)",
			"error", redact.String(err.Error()), "last_uid", cp.LastUID, "tick_id", t.opts.TickID)
		t.report.Outcomes[OutcomeSessionCut]++
		err = nil
	}
	lastError := ""
	if de := (*sequence.DeliveryError)(nil); errors.As(err, &de) && de.Kind == sequence.DeliveryMailboxAuthRevoked {
		lastError = redact.Error(fmt.Errorf("inbox of %s: %s: %w", address, de.Kind, de.Err)).Error()
		err = t.pauseRevoked(saveCtx, cp.MailboxID, address, de)
	} else if err != nil {
		// A server's NO may repeat the password: hidden in every form.
		err = redact.Error(fmt.Errorf("inbox of %s: %w", address, imapFailure(err)))
		lastError = err.Error()
		t.report.Outcomes[OutcomeMailboxError]++
		t.opts.Logger.Warn("inbox read failed", "mailbox", address, "error", lastError, "tick_id", t.opts.TickID)
	}
	return errors.Join(err, store.SaveInboxCheckpoint(saveCtx, t.pool, store.InboxProgress{Checkpoint: cp, LastError: lastError, TickID: t.opts.TickID, Release: true}))
}

// imapFailure names a TLS failure as IMAP's (a *sequence.LoginError:
// "imap TLS: ..."), with the server certificate's subject and issuer or
// the tls_ca file: a bad tls_ca comes wrapped as the email tick's error,
// which read "smtp mailbox_refused". Other failures are left as they are.
func imapFailure(err error) error {
	if le := sequence.ClassifyLogin("imap", err, false); le.Stage == sequence.LoginStageTLS {
		return le
	}
	return err
}

// pauseRevoked pauses a mailbox whose OAuth2 grant was revoked as the
// email tick pauses it (one mailbox_auth_revoked event per episode, its
// reason naming `rindactl mailbox authorize`): a deliberate block that
// fails no tick, and the other mailboxes are read on.
func (t *inboxTick) pauseRevoked(ctx context.Context, mailboxID int64, address string, de *sequence.DeliveryError) error {
	until, err := sequence.PauseMailboxFor(ctx, t.pool, mailboxID, de, t.opts.Now(), t.opts.TickID)
	if err != nil {
		return err
	}
	t.report.Outcomes[OutcomeMailboxPaused]++
	t.opts.Logger.Warn("mailbox paused: its OAuth2 grant was revoked", "mailbox", address, "paused_until", until, "tick_id", t.opts.TickID)
	return nil
}

func (t *inboxTick) read(ctx context.Context, cp *store.InboxCheckpoint, address *string, end time.Time) error {
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
	r, err := t.open(ctx, mb, end)
	if err != nil {
		return err
	}
	defer r.close()
	if err := t.resume(r, cp, mb.Address); err != nil {
		return err
	}
	ranges, err := r.search(cp.LastUID, time.Time{})
	if err != nil {
		return err
	}
	plan := planRead(ranges, cp.LastUID, t.opts.Batch)
	box := mailbox{id: cp.MailboxID, workspaceID: cp.WorkspaceID, address: recs[0].Address, verpSecret: recs[0].VERPSecret}
	if err := t.readAhead(ctx, r, box, cp, plan.ahead); err != nil {
		return err
	}
	return t.readBacklog(ctx, r, box, cp, plan.backlog)
}

// reading says whether the tick still reads: not told to stop, before its
// deadline.
func (t *inboxTick) reading(ctx context.Context) bool {
	return ctx.Err() == nil && t.opts.Now().Before(t.deadline)
}

// readAhead reads the newest messages of a flooded mailbox (readPlan),
// newest first; the checkpoint stays where it is.
func (t *inboxTick) readAhead(ctx context.Context, r *reader, box mailbox, cp *store.InboxCheckpoint, uids []uint32) error {
	for len(uids) > 0 && t.reading(ctx) {
		chunk := uids[:min(chunkSize, len(uids))]
		uids = uids[len(chunk):]
		msgs, err := r.fetch(chunk)
		if err != nil {
			return err
		}
		if err := t.act(context.WithoutCancel(ctx), box, cp, msgs, *cp); err != nil {
			return err
		}
	}
	return nil
}

// readBacklog reads the oldest messages above the checkpoint, oldest
// first, and moves the checkpoint past those the server returned, never
// past one it left out (advance).
func (t *inboxTick) readBacklog(ctx context.Context, r *reader, box mailbox, cp *store.InboxCheckpoint, uids []uint32) error {
	for len(uids) > 0 && t.reading(ctx) {
		chunk := uids[:min(chunkSize, len(uids))]
		uids = uids[len(chunk):]
		msgs, err := r.fetch(chunk)
		if err != nil {
			return err
		}
		next, whole, err := t.advance(context.WithoutCancel(ctx), box, cp, chunk, msgs)
		if err != nil {
			return err
		}
		if err := t.act(context.WithoutCancel(ctx), box, cp, msgs, next); err != nil {
			return err
		}
		if !whole {
			return nil
		}
	}
	return nil
}

// advance is the checkpoint after a chunk (ascending UIDs) was fetched:
// past each UID the server returned, and past one it left out only when
// an earlier session's FETCH left it out too (leftOut); whole says the
// checkpoint reached the chunk's end. ReadThrough becomes the newest
// INTERNALDATE passed, a date in the future aside (a server's clock or
// its lie would hide earlier messages after a renumbering).
func (t *inboxTick) advance(ctx context.Context, box mailbox, cp *store.InboxCheckpoint, chunk []uint32, msgs []fetched) (store.InboxCheckpoint, bool, error) {
	next := *cp
	dates := make(map[uint32]time.Time, len(msgs))
	for _, m := range msgs {
		dates[m.uid] = m.date
	}
	now := t.opts.Now()
	for _, u := range chunk {
		d, got := dates[u]
		if !got {
			passed, err := t.leftOut(ctx, box, cp.UIDValidity, u)
			if err != nil || !passed {
				return next, false, err
			}
		}
		next.LastUID = u
		if d.After(next.ReadThrough) && !d.After(now) {
			next.ReadThrough = d
		}
	}
	return next, true, nil
}

// Reasons recorded for a UID a server listed but left out of its FETCH
// answer.
const (
	leftOutOnce  = "the server left it out of its FETCH answer; the next tick asks again"
	leftOutTwice = "the server left it out of two FETCH answers; passed over"
)

// leftOut handles UID u that a FETCH answered OK left out. The first time
// it is recorded in inbox_skipped and the checkpoint stops before it, for
// the next session to ask again (false); the second time it is passed
// over as skipped (true), so a UID a server lists but never returns cannot
// hold the mailbox back for ever.
func (t *inboxTick) leftOut(ctx context.Context, box mailbox, uidValidity, u uint32) (bool, error) {
	again, err := store.InboxSkippedHas(ctx, t.pool, box.id, uidValidity, u)
	if err != nil {
		return false, err
	}
	reason := leftOutOnce
	if again {
		reason = leftOutTwice
		t.report.Outcomes[OutcomeSkipped]++
		t.report.Skipped = append(t.report.Skipped, SkippedMessage{Mailbox: box.address, UID: u, Reason: reason})
	}
	t.opts.Logger.Warn("inbox message left out of a FETCH answer", "mailbox", box.address, "uid", u, "reason", reason, "tick_id", t.opts.TickID)
	return again, store.SkipInboxMessage(ctx, t.pool, box.id, store.InboxSkip{UIDValidity: uidValidity, UID: u, Reason: reason, TickID: t.opts.TickID})
}

// resume puts cp under the session's UIDVALIDITY. A new one renumbered
// the INBOX: reading goes on from the first message dated on or after the
// checkpoint's ReadThrough (reader.resumeAfter), not from UID 1 again,
// which would read the same first batch each time a server changes it at
// every session. A first read, or a checkpoint without a date, reads the
// INBOX from the start.
func (t *inboxTick) resume(r *reader, cp *store.InboxCheckpoint, address string) error {
	if r.uidValidity == cp.UIDValidity {
		return nil
	}
	known := cp.UIDValidity != 0 && !cp.ReadThrough.IsZero()
	cp.UIDValidity, cp.LastUID = r.uidValidity, 0
	if !known {
		return nil
	}
	last, err := r.resumeAfter(cp.ReadThrough)
	if err != nil {
		return err
	}
	cp.LastUID = last
	t.opts.Logger.Info("inbox UIDVALIDITY changed; reading on by date", "mailbox", address,
		"read_through", cp.ReadThrough, "last_uid", last, "tick_id", t.opts.TickID)
	return nil
}

// open logs in to mb's INBOX with its password (from its password_env,
// hidden from every log and error from here on) and its tls_ca.
func (t *inboxTick) open(ctx context.Context, mb sequence.Mailbox, end time.Time) (*reader, error) {
	cred, err := t.credential(ctx, mb)
	if err != nil {
		return nil, err
	}
	redact.Register(cred.secret)
	// The mailbox's tls_ca (a private CA) is trusted for IMAP as for SMTP.
	tlsConfig, err := mb.TLSConfig(t.opts.TLSConfig, mb.IMAP.Host)
	if err != nil {
		return nil, err
	}
	r, err := dial(ctx, *mb.IMAP, cred, tlsConfig, end)
	if !cred.xoauth2 || !errors.Is(err, errLogin) || errors.Is(err, errSessionEnded) {
		return r, err
	}
	// The server refused an access token that had not expired: its grant
	// was revoked, or the provider retired it early (a password change).
	// Once, with a fresh token: a revoked grant now gets invalid_grant
	// from the provider and the mailbox pauses for `mailbox authorize`.
	if ferr := t.opts.Tokens.Refused(ctx, mb.ID, cred.secret); ferr != nil {
		return nil, errors.Join(err, ferr)
	}
	fresh, cerr := t.credential(ctx, mb)
	if cerr != nil {
		return nil, cerr
	}
	redact.Register(fresh.secret)
	t.opts.Logger.Info("IMAP server refused the cached OAuth2 access token; logging in with a refreshed one", "mailbox", mb.Address, "tick_id", t.opts.TickID)
	return dial(ctx, *mb.IMAP, fresh, tlsConfig, end)
}

// credential is mb's password (password_env) or, for an oauth2 mailbox,
// a fresh access token (sequence.Credential).
func (t *inboxTick) credential(ctx context.Context, mb sequence.Mailbox) (credential, error) {
	if mb.OAuth2 != nil {
		token, err := sequence.Credential(ctx, mb, t.opts.LookupEnv, t.opts.Tokens)
		return credential{secret: token, xoauth2: true}, err
	}
	password, ok := t.opts.LookupEnv(mb.PasswordEnv)
	if !ok || password == "" {
		return credential{}, &sequence.MissingCredentialError{Address: mb.Address, Env: mb.PasswordEnv}
	}
	return credential{secret: password}, nil
}

// act ends the sequences a chunk of messages answers, records the ones it
// cannot process as skipped, and moves the checkpoint to next, in one
// transaction; then hard bounces among them may pause the mailbox
// (sequence.GuardBounces).
func (t *inboxTick) act(ctx context.Context, mb mailbox, cp *store.InboxCheckpoint, msgs []fetched, next store.InboxCheckpoint) error {
	var c chunkResult
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		c = chunkResult{counts: map[string]int{}}
		for _, m := range msgs {
			if err := t.actOne(ctx, tx, mb, cp, m, &c); err != nil {
				return fmt.Errorf("message UID %d: %w", m.uid, err)
			}
		}
		return store.SaveInboxCheckpoint(ctx, tx, store.InboxProgress{Checkpoint: next, TickID: t.opts.TickID})
	})
	if err != nil {
		return err
	}
	*cp = next
	t.report.Messages += len(msgs)
	for k, v := range c.counts {
		t.report.Outcomes[k] += v
	}
	t.report.Skipped = append(t.report.Skipped, c.skipped...)
	t.report.Unmatched = append(t.report.Unmatched, c.unmatched[:min(len(c.unmatched), unmatchedListedMax-len(t.report.Unmatched))]...)
	if !c.hardBounces {
		return nil
	}
	// Once the bounces are committed: too many pause the mailbox.
	halt, err := sequence.GuardBounces(ctx, t.pool, mb.id, t.opts.Now(), t.opts.TickID)
	if err != nil || !halt.PausedHere {
		return err
	}
	t.report.Outcomes[OutcomeMailboxPaused]++
	t.opts.Logger.Warn("mailbox paused: too many hard bounces", "mailbox", mb.address, "paused_until", halt.Until, "tick_id", t.opts.TickID)
	return nil
}

// chunkResult is what a chunk's transaction did, reported once it commits.
type chunkResult struct {
	counts      map[string]int
	skipped     []SkippedMessage
	unmatched   []SkippedMessage
	hardBounces bool
}

// errUnprocessable marks a message the classifier could not read.
var errUnprocessable = errors.New("message cannot be processed")

// actOne acts on one message inside its own savepoint. A message whose
// content Postgres refuses (or that breaks the classifier) is rolled back
// alone and recorded as skipped, so it cannot block the mailbox; any other
// failure (the database gone, a timeout) fails the chunk, to be read again.
func (t *inboxTick) actOne(ctx context.Context, tx pgx.Tx, mb mailbox, cp *store.InboxCheckpoint, m fetched, c *chunkResult) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	var unmatched []SkippedMessage
	hard, err := t.handle(ctx, sp, mb, cp, m, counts, &unmatched)
	if err == nil {
		if err := sp.Commit(ctx); err != nil {
			return err
		}
		for k, v := range counts {
			c.counts[k] += v
		}
		c.unmatched = append(c.unmatched, unmatched...)
		c.hardBounces = c.hardBounces || hard
		return nil
	}
	if rerr := sp.Rollback(ctx); rerr != nil || !isPoison(err) {
		return errors.Join(err, rerr)
	}
	reason := clip(cleanText(err.Error()), skipReasonMax)
	if err := store.SkipInboxMessage(ctx, tx, mb.id, store.InboxSkip{UIDValidity: cp.UIDValidity, UID: m.uid, Reason: reason, TickID: t.opts.TickID}); err != nil {
		return err
	}
	c.counts[OutcomeSkipped]++
	c.skipped = append(c.skipped, SkippedMessage{Mailbox: mb.address, UID: m.uid, Reason: reason})
	t.opts.Logger.Warn("inbox message skipped", "mailbox", mb.address, "uid", m.uid, "reason", reason, "tick_id", t.opts.TickID)
	return nil
}

// isPoison tells a message's own fault from the database's: a classifier
// panic, or a data, integrity or size error on what the message held.
func isPoison(err error) bool {
	if errors.Is(err, errUnprocessable) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "22", "23", "54": // data exception, integrity constraint, program limit
			return true
		}
	}
	return false
}

// classify is Classify; a test swaps it to play a message nothing can
// process.
var classify = Classify

// handle acts on one classified message; hard says it recorded a hard
// bounce.
func (t *inboxTick) handle(ctx context.Context, tx pgx.Tx, mb mailbox, cp *store.InboxCheckpoint, m fetched, counts map[string]int, unmatched *[]SkippedMessage) (hard bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			hard, err = false, fmt.Errorf("%w: %v", errUnprocessable, r)
		}
	}()
	f := classify(m.raw)
	switch f.Kind {
	case KindReply:
		return false, t.reply(ctx, tx, mb, f, counts)
	case KindBounce:
		return t.bounce(ctx, tx, mb, cp, m.uid, f, counts, unmatched)
	case KindAutoReply:
		counts[OutcomeAutoReply]++
	case KindDelayed:
		counts[OutcomeDelayed]++
	case KindUnsubscribeMail:
		return false, actUnsubscribe(ctx, tx, f.UnsubscribeToken, counts)
	default:
		counts[OutcomeOther]++
	}
	return false, nil
}

// reply ends the sequences whose messages a reply answers: as replied, or
// as unsubscribed (address suppressed) when it asks to stop.
func (t *inboxTick) reply(ctx context.Context, tx pgx.Tx, mb mailbox, f Finding, counts map[string]int) error {
	sends, err := store.InboxSendsByMessageID(ctx, tx, mb.id, f.MessageIDs)
	if err != nil {
		return err
	}
	if f.Unsubscribe {
		return mark(ctx, tx, sends, enrollment.Unsubscribed, string(enrollment.Unsubscribed), OutcomeUnsubscribed, counts)
	}
	return mark(ctx, tx, sends, enrollment.Replied, "", OutcomeReplied, counts)
}

// eventSender is a message's sender as an event may show it: the bare
// address, without the characters Slack reads as markup, so a sender
// cannot put a link in an alert.
func eventSender(from string) string {
	if a, err := mail.ParseAddress(from); err == nil {
		from = a.Address
	}
	from = strings.Map(func(r rune) rune {
		if strings.ContainsRune("<>&|*_~`", r) {
			return -1
		}
		return r
	}, from)
	if from == "" {
		return "an unknown sender"
	}
	return from
}

// mark ends the sends' enrollments as status (suppressing their addresses
// with the reason suppress, unless empty) and counts what changed.
func mark(ctx context.Context, tx pgx.Tx, sends []store.InboxSend, status enrollment.Status, suppress, outcome string, counts map[string]int) error {
	if len(sends) == 0 {
		counts[OutcomeUnmatched]++
		return nil
	}
	ids := make([]int64, 0, len(sends))
	for _, s := range sends {
		if !slices.Contains(ids, s.EnrollmentID) {
			ids = append(ids, s.EnrollmentID)
		}
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
// of its own so that a token whose enrollment vanished meanwhile (lead
// forget) is an unmatched message, not a failed one. A bad token counts as unmatched, a used one as already ended.
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
