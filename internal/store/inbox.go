package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// InboxCheckpoint is where the inbox tick left off in one mailbox.
type InboxCheckpoint struct {
	MailboxID   int64
	WorkspaceID int64
	UIDValidity uint32
	LastUID     uint32
	// ReadThrough is the newest INTERNALDATE among the messages up to
	// LastUID (zero when unknown): where reading resumes, by date, when the
	// server renumbers the INBOX (a new UIDVALIDITY).
	ReadThrough time.Time
}

// ClaimInbox leases the next mailbox to read for tickID, or returns
// ok=false when every mailbox is read (since tickStarted) or leased.
func ClaimInbox(ctx context.Context, db TxDB, tickStarted time.Time, lease time.Duration, tickID string) (InboxCheckpoint, bool, error) {
	q := sqlcdb.New(db)
	if err := q.InboxCheckpointsEnsure(ctx); err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("inbox checkpoints: %w", err)
	}
	// The lease commits only once its row was read. The claim stays
	// cancellable (a signal while it waits for a lock is a clean stop), and
	// a signal after the server ran it but before its answer was read drops
	// the connection with the lease uncommitted: never a committed lease
	// that the tick does not know it holds.
	tx, err := db.Begin(ctx)
	if err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("claim inbox: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	r, err := sqlcdb.New(tx).InboxClaim(ctx, sqlcdb.InboxClaimParams{CheckedBefore: tickStarted, Lease: lease, TickID: tickID})
	if errors.Is(err, pgx.ErrNoRows) {
		return InboxCheckpoint{}, false, nil
	}
	if err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("claim inbox: %w", err)
	}
	if err := tx.Commit(context.WithoutCancel(ctx)); err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("claim inbox: %w", err)
	}
	cp := InboxCheckpoint{MailboxID: r.MailboxID, WorkspaceID: r.WorkspaceID, UIDValidity: uint32(r.UidValidity), LastUID: uint32(r.LastUid)}
	if r.ReadThrough != nil {
		cp.ReadThrough = *r.ReadThrough
	}
	return cp, true, nil
}

// ErrInboxLeaseLost says a tick's lease on a mailbox ran out (or another
// tick holds it): what it read must not be recorded.
var ErrInboxLeaseLost = errors.New("the mailbox's lease ran out before its progress was recorded; the next tick reads those messages again")

// InboxProgress is what tick TickID records of a mailbox: where it got to
// (Checkpoint), the error it stopped at ("": none), and whether it is done
// with the mailbox (Release ends its lease).
type InboxProgress struct {
	Checkpoint        InboxCheckpoint
	LastError, TickID string
	Release           bool
}

// SaveInboxCheckpoint records p. Progress without release is recorded only
// while p.TickID's lease lasts, else ErrInboxLeaseLost; a release after the
// lease ran out records nothing.
func SaveInboxCheckpoint(ctx context.Context, db DBTX, p InboxProgress) error {
	c := p.Checkpoint
	n, err := sqlcdb.New(db).InboxCheckpointSave(ctx, sqlcdb.InboxCheckpointSaveParams{
		MailboxID: c.MailboxID, UidValidity: int64(c.UIDValidity), LastUid: int64(c.LastUID), ReadThrough: timeOrNil(c.ReadThrough),
		LastError: redact.Stored(p.LastError), TickID: p.TickID, Release: p.Release,
	})
	if err != nil {
		return fmt.Errorf("save inbox checkpoint: %w", err)
	}
	if n == 0 && !p.Release {
		return ErrInboxLeaseLost
	}
	return nil
}

// InboxSend is one of our sends an inbox message is about.
type InboxSend struct {
	SendID, EnrollmentID, WorkspaceID int64
	// Email is the address it went to (canonical, as leads store it).
	Email string
}

// InboxSendsByMessageID finds the mailbox's sends with these Message-IDs.
func InboxSendsByMessageID(ctx context.Context, db DBTX, mailboxID int64, messageIDs []string) ([]InboxSend, error) {
	if len(messageIDs) == 0 {
		return nil, nil
	}
	rows, err := sqlcdb.New(db).InboxSendsByMessageId(ctx, sqlcdb.InboxSendsByMessageIdParams{MailboxID: mailboxID, MessageIds: messageIDs})
	return convertRows(rows, err, "inbox sends by Message-ID", func(r sqlcdb.InboxSendsByMessageIdRow) InboxSend {
		return InboxSend{SendID: r.SendID, EnrollmentID: r.EnrollmentID, WorkspaceID: r.WorkspaceID, Email: r.Email}
	})
}

// InboxSendsToRecipients finds, for each of the addresses, the mailbox's
// latest send to it since since that its server did not refuse; an
// address the mailbox did not mail has none.
func InboxSendsToRecipients(ctx context.Context, db DBTX, mailboxID int64, recipients []string, since time.Time) ([]InboxSend, error) {
	if len(recipients) == 0 {
		return nil, nil
	}
	keys := make([]string, len(recipients))
	for i, r := range recipients {
		keys[i] = address.Key(r) // as leads store it
	}
	rows, err := sqlcdb.New(db).InboxSendsToRecipients(ctx, sqlcdb.InboxSendsToRecipientsParams{MailboxID: mailboxID, Since: since, Recipients: keys})
	return convertRows(rows, err, "inbox sends to recipients", func(r sqlcdb.InboxSendsToRecipientsRow) InboxSend {
		return InboxSend{SendID: r.SendID, EnrollmentID: r.EnrollmentID, WorkspaceID: r.WorkspaceID, Email: r.Email}
	})
}

// MarkSendsBounced records a hard bounce on these sends.
func MarkSendsBounced(ctx context.Context, db DBTX, sendIDs []int64) error {
	if len(sendIDs) == 0 {
		return nil
	}
	if _, err := sqlcdb.New(db).InboxSendsBounced(ctx, sendIDs); err != nil {
		return fmt.Errorf("record bounced sends: %w", err)
	}
	return nil
}

// InboxSkip is a message the inbox tick could not process.
type InboxSkip struct {
	UIDValidity uint32    `json:"uid_validity"`
	UID         uint32    `json:"uid"`
	Reason      string    `json:"reason"`
	TickID      string    `json:"tick_id"`
	SkippedAt   time.Time `json:"skipped_at"`
}

// SkipInboxMessage records that message uid of the mailbox was skipped.
func SkipInboxMessage(ctx context.Context, db DBTX, mailboxID int64, s InboxSkip) error {
	err := sqlcdb.New(db).InboxSkipInsert(ctx, sqlcdb.InboxSkipInsertParams{
		MailboxID: mailboxID, UidValidity: int64(s.UIDValidity), Uid: int64(s.UID), Reason: redact.Stored(s.Reason), TickID: s.TickID,
	})
	if err != nil {
		return fmt.Errorf("record skipped message UID %d: %w", s.UID, err)
	}
	return nil
}

// InboxSkipped lists the mailbox's most recently skipped messages.
func InboxSkipped(ctx context.Context, db DBTX, mailboxID int64, limit int) ([]InboxSkip, error) {
	rows, err := sqlcdb.New(db).InboxSkippedRecent(ctx, sqlcdb.InboxSkippedRecentParams{MailboxID: mailboxID, MaxRows: int32(limit)})
	return convertRows(rows, err, "skipped inbox messages", func(r sqlcdb.InboxSkippedRecentRow) InboxSkip {
		return InboxSkip{UIDValidity: uint32(r.UidValidity), UID: uint32(r.Uid), Reason: r.Reason, TickID: r.TickID, SkippedAt: r.SkippedAt}
	})
}

// InboxUnmatched is a delivery report the inbox tick could not tie to a
// send of ours: it ended nothing.
type InboxUnmatched struct {
	UIDValidity uint32    `json:"uid_validity"`
	UID         uint32    `json:"uid"`
	Reason      string    `json:"reason"`
	TickID      string    `json:"tick_id"`
	RecordedAt  time.Time `json:"recorded_at"`
}

// RecordInboxUnmatched records that message uid of the mailbox was a
// delivery report that proved nothing of ours.
func RecordInboxUnmatched(ctx context.Context, db DBTX, mailboxID int64, u InboxUnmatched) error {
	err := sqlcdb.New(db).InboxUnmatchedInsert(ctx, sqlcdb.InboxUnmatchedInsertParams{
		MailboxID: mailboxID, UidValidity: int64(u.UIDValidity), Uid: int64(u.UID), Reason: u.Reason, TickID: u.TickID,
	})
	if err != nil {
		return fmt.Errorf("record unmatched report UID %d: %w", u.UID, err)
	}
	return nil
}

// InboxUnmatchedRecent lists the mailbox's most recently recorded
// unmatched reports, and how many it has in all.
func InboxUnmatchedRecent(ctx context.Context, db DBTX, mailboxID int64, limit int) ([]InboxUnmatched, int64, error) {
	rows, err := sqlcdb.New(db).InboxUnmatchedRecent(ctx, sqlcdb.InboxUnmatchedRecentParams{MailboxID: mailboxID, MaxRows: int32(limit)})
	total := int64(0)
	if len(rows) > 0 {
		total = rows[0].Total
	}
	list, err := convertRows(rows, err, "unmatched inbox reports", func(r sqlcdb.InboxUnmatchedRecentRow) InboxUnmatched {
		return InboxUnmatched{UIDValidity: uint32(r.UidValidity), UID: uint32(r.Uid), Reason: r.Reason, TickID: r.TickID, RecordedAt: r.RecordedAt}
	})
	return list, total, err
}

// SuspiciousEvent is a message's inbox_suspicious event: EpisodeKey names
// its mailbox's episode (the hour), MessageKey the message.
type SuspiciousEvent struct {
	WorkspaceID, MailboxID int64
	EpisodeKey, MessageKey string
	Payload                any
}

// InsertSuspiciousEvent writes e: the alert of its mailbox's episode when
// e.EpisodeKey is new (the first of the hour), else an event kept unposted
// under e.MessageKey. It reports whether the event is the alert.
func InsertSuspiciousEvent(ctx context.Context, tx pgx.Tx, e SuspiciousEvent) (bool, error) {
	p, err := eventPayload("inbox_suspicious", e.Payload)
	if err != nil {
		return false, err
	}
	n, err := sqlcdb.New(tx).InboxEventSuspicious(ctx, sqlcdb.InboxEventSuspiciousParams{
		WorkspaceID: e.WorkspaceID, MailboxID: e.MailboxID, EpisodeKey: e.EpisodeKey, MessageKey: e.MessageKey, Payload: p,
	})
	if err != nil {
		return false, fmt.Errorf("event inbox_suspicious: %w", err)
	}
	return n > 0, nil
}

// timeOrNil is t, or NULL when t is zero.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// InboxSkippedHas says whether message uid of the mailbox is recorded as
// skipped under uidValidity.
func InboxSkippedHas(ctx context.Context, db DBTX, mailboxID int64, uidValidity, uid uint32) (bool, error) {
	ok, err := sqlcdb.New(db).InboxSkippedHas(ctx, sqlcdb.InboxSkippedHasParams{MailboxID: mailboxID, UidValidity: int64(uidValidity), Uid: int64(uid)})
	if err != nil {
		return false, fmt.Errorf("skipped inbox message UID %d: %w", uid, err)
	}
	return ok, nil
}
