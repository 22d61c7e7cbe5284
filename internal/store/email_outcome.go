package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/faults"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// SendStart is a message about to be handed to SMTP.
type SendStart struct {
	EnrollmentID int64
	Step         int
	MailboxID    int64
	MessageID    string
	// CampaignID and Email (canonical, as leads store it) claim the
	// address for the enrollment.
	CampaignID int64
	Email      string
	// Holder is the enrollment that held the address in the campaign when
	// the claim read it (ClaimedEnrollment.Holder), 0 for none.
	Holder int64
}

// SendBegun is what BeginSends did with one SendStart.
type SendBegun struct {
	// Written: the 'sending' row is committed; the message may go out.
	Written bool
	// Duplicate is the other enrollment of the campaign that already
	// holds the lead's (normalised) address; the message must not go out.
	Duplicate int64
}

// BeginSends records sends as 'sending' and commits before any of them is
// sent, claiming each lead's address for its campaign. An enrollment
// absent from the result, or not Written, must not be sent: its step
// already has a row, or another enrollment mails the address.
//
// The commit is durable whatever the server's synchronous_commit: a
// 'sending' row lost in a Postgres crash after its message went out would
// let the step be sent again (the invariant harness found it on a server
// run with synchronous_commit=off). One round trip: BEGIN, SET LOCAL, the
// statement, COMMIT (without BEGIN and COMMIT inside a transaction).
func BeginSends(ctx context.Context, db Batcher, starts []SendStart) (map[int64]SendBegun, error) {
	return BeginSendsSettling(ctx, db, starts, "", Settlement{})
}

//go:embed queries/byhand/email_sends_begin.sql
var emailSendsBeginSQL string

// emailSendsBeginParams are email_sends_begin.sql's parameters: one array
// per SendStart field, an element per send.
type emailSendsBeginParams struct {
	EnrollmentIDs []int64  `db:"enrollment_ids"`
	Steps         []int32  `db:"steps"`
	MailboxIDs    []int64  `db:"mailbox_ids"`
	MessageIDs    []string `db:"message_ids"`
	CampaignIDs   []int64  `db:"campaign_ids"`
	Emails        []string `db:"emails"`
	Holders       []int64  `db:"holders"`
}

var emailSendsBeginStmt = byName[emailSendsBeginParams](emailSendsBeginSQL)

// BeginSendsSettling is BeginSends that also writes settled, the outcomes
// of sends already made, for tickID in the same transaction and round
// trip: the settles ride behind the next messages' 'sending' rows, and
// both commit, or neither does, at once.
func BeginSendsSettling(ctx context.Context, db Batcher, starts []SendStart, tickID string, settled Settlement) (map[int64]SendBegun, error) {
	n := len(starts)
	p := emailSendsBeginParams{
		EnrollmentIDs: make([]int64, n), Steps: make([]int32, n), MailboxIDs: make([]int64, n), MessageIDs: make([]string, n),
		CampaignIDs: make([]int64, n), Emails: make([]string, n), Holders: make([]int64, n),
	}
	for i, s := range starts {
		p.EnrollmentIDs[i], p.Steps[i], p.MailboxIDs[i], p.MessageIDs[i] = s.EnrollmentID, int32(s.Step), s.MailboxID, s.MessageID
		p.CampaignIDs[i], p.Emails[i], p.Holders[i] = s.CampaignID, s.Email, s.Holder
	}
	out := make(map[int64]SendBegun, n)
	_, inTx := db.(pgx.Tx)
	b := &pgx.Batch{}
	if !inTx {
		b.Queue("BEGIN")
	}
	b.Queue("SET LOCAL synchronous_commit = on")
	if n > 0 {
		b.Queue(emailSendsBeginStmt.sql, emailSendsBeginStmt.args(p)...).Query(func(rows pgx.Rows) error {
			var id, dup int64
			var written bool
			_, err := pgx.ForEachRow(rows, []any{&id, &written, &dup}, func() error {
				out[id] = SendBegun{Written: written, Duplicate: dup}
				return nil
			})
			return err
		})
	}
	if !settled.empty() {
		// After the inserts, so that only the settle runs under its
		// plan rule (planByKey; see Settle).
		stmt := settleStmt(tickID, settled)
		b.Queue(planByKey.settings)
		b.Queue(stmt.SQL, stmt.Arguments...)
	}
	if !inTx {
		b.Queue("COMMIT")
	}
	if err := db.SendBatch(ctx, b).Close(); err != nil {
		return nil, fmt.Errorf("record sending: %w", err)
	}
	return out, nil
}

// Metrics a settled send adds to its mailbox's running totals
// (email_mailbox_totals); empty adds nothing (the send was never tried).
const (
	MetricSent            = "sent"
	MetricFailed          = "failed"   // refused for good
	MetricDeferred        = "deferred" // refused for now; retried later
	MetricDeliveryUnknown = string(enrollment.DeliveryUnknown)
)

// SendResult settles one 'sending' row.
type SendResult struct {
	EnrollmentID int64
	Step         int
	Status       enrollment.SendStatus // sent, failed or delivery_unknown
	SentAt       time.Time
	Error        string
	Metric       string
	// Bounced: the server refused the address for good (a hard bounce).
	Bounced bool
}

// EnrollmentUpdate is an enrollment's state after a tick worked on it.
type EnrollmentUpdate struct {
	ID          int64
	Status      enrollment.Status
	CurrentStep int
	NextSendAt  time.Time
	MailboxID   int64 // 0 keeps the current mailbox
	Attempts    int
	LastError   string
}

// Suppression is an address that must not be mailed again, in any
// spelling: it is stored canonical (address.Key), and keyed by the SHA-256
// of that spelling (email_sha256, migration 00015).
type Suppression struct {
	WorkspaceID int64
	// Email is the address; empty for a forgotten person (lead forget),
	// whose row keeps only SHA256.
	Email string
	// SHA256 is the hash of the canonical address. Postgres computes it
	// for a row with an Email; Suppress reads it only for one without.
	SHA256 []byte
	Reason string
	// CreatedAt is when the address was suppressed; zero: now.
	CreatedAt time.Time
}

// Settlement is a group of tick outcomes written in one transaction.
type Settlement struct {
	Sends        []SendResult
	Enrollments  []EnrollmentUpdate
	Suppressions []Suppression
}

// Settle writes a settlement for tickID with one statement, in one round
// trip, planned by key (planByKey): planned while sends was small (a young
// install), its generic plan scanned all of sends for every group it
// settled, as the tick filled it.
func Settle(ctx context.Context, db Batcher, tickID string, s Settlement) error {
	if faults.On(faults.Recorded) {
		s.Sends = nil
	}
	if s.empty() {
		return nil
	}
	if err := planByKey.exec(ctx, db, settleStmt(tickID, s)); err != nil {
		return fmt.Errorf("settle outcomes: %w", err)
	}
	return nil
}

func (s Settlement) empty() bool {
	return len(s.Sends) == 0 && len(s.Enrollments) == 0 && len(s.Suppressions) == 0
}

//go:embed queries/byhand/email_settle.sql
var emailSettleSQL string

// emailSettleParams are email_settle.sql's parameters: the tick, then one
// array per field of the settled sends (Send...), the enrollments' new
// states (Enrollment...) and the suppressions (Suppression...), an element
// per row.
type emailSettleParams struct {
	TickID                string      `db:"tick_id"`
	SendEnrollmentIDs     []int64     `db:"send_enrollment_ids"`
	SendSteps             []int32     `db:"send_steps"`
	SendStatuses          []string    `db:"send_statuses"`
	SendSentAt            []time.Time `db:"send_sent_at"`
	SendErrors            []string    `db:"send_errors"`
	EnrollmentIDs         []int64     `db:"enrollment_ids"`
	EnrollmentStatuses    []string    `db:"enrollment_statuses"`
	EnrollmentSteps       []int32     `db:"enrollment_steps"`
	EnrollmentNextSendAt  []time.Time `db:"enrollment_next_send_at"`
	EnrollmentMailboxIDs  []int64     `db:"enrollment_mailbox_ids"`
	EnrollmentAttempts    []int32     `db:"enrollment_attempts"`
	EnrollmentErrors      []string    `db:"enrollment_errors"`
	SuppressionWorkspaces []int64     `db:"suppression_workspaces"`
	SuppressionEmails     []string    `db:"suppression_emails"`
	SuppressionReasons    []string    `db:"suppression_reasons"`
	SendMetrics           []string    `db:"send_metrics"`
	SendBounced           []bool      `db:"send_bounced"`
}

var emailSettleStmt = byName[emailSettleParams](emailSettleSQL)

// settleStmt is the settle statement for s, to send under planByKey.
func settleStmt(tickID string, s Settlement) *pgx.QueuedQuery {
	p := emailSettleParams{TickID: tickID}
	n := len(s.Sends)
	p.SendEnrollmentIDs, p.SendSteps, p.SendStatuses = make([]int64, n), make([]int32, n), make([]string, n)
	p.SendSentAt, p.SendErrors, p.SendMetrics, p.SendBounced = make([]time.Time, n), make([]string, n), make([]string, n), make([]bool, n)
	for i, r := range s.Sends {
		p.SendEnrollmentIDs[i], p.SendSteps[i], p.SendStatuses[i] = r.EnrollmentID, int32(r.Step), string(r.Status)
		p.SendSentAt[i], p.SendErrors[i], p.SendMetrics[i], p.SendBounced[i] = r.SentAt, redact.Stored(r.Error), r.Metric, r.Bounced
	}
	n = len(s.Enrollments)
	p.EnrollmentIDs, p.EnrollmentStatuses, p.EnrollmentSteps, p.EnrollmentNextSendAt = make([]int64, n), make([]string, n), make([]int32, n), make([]time.Time, n)
	p.EnrollmentMailboxIDs, p.EnrollmentAttempts, p.EnrollmentErrors = make([]int64, n), make([]int32, n), make([]string, n)
	for i, u := range s.Enrollments {
		p.EnrollmentIDs[i], p.EnrollmentStatuses[i], p.EnrollmentSteps[i], p.EnrollmentNextSendAt[i] = u.ID, string(u.Status), int32(u.CurrentStep), u.NextSendAt
		p.EnrollmentMailboxIDs[i], p.EnrollmentAttempts[i], p.EnrollmentErrors[i] = u.MailboxID, int32(u.Attempts), redact.Stored(u.LastError)
	}
	n = len(s.Suppressions)
	p.SuppressionWorkspaces, p.SuppressionEmails, p.SuppressionReasons = make([]int64, n), make([]string, n), make([]string, n)
	for i, sp := range s.Suppressions {
		p.SuppressionWorkspaces[i], p.SuppressionEmails[i], p.SuppressionReasons[i] = sp.WorkspaceID, address.Key(sp.Email), sp.Reason
	}
	return &pgx.QueuedQuery{SQL: emailSettleStmt.sql, Arguments: emailSettleStmt.args(p)}
}

// PauseMailbox pauses a mailbox until until and returns its workspace
// and address.
func PauseMailbox(ctx context.Context, tx pgx.Tx, mailboxID int64, until time.Time, reason string) (workspaceID int64, address string, err error) {
	reason = redact.Stored(reason)
	r, err := sqlcdb.New(tx).EmailMailboxPause(ctx, sqlcdb.EmailMailboxPauseParams{ID: mailboxID, PausedUntil: &until, PauseReason: &reason})
	if err != nil {
		return 0, "", fmt.Errorf("pause mailbox %d: %w", mailboxID, err)
	}
	return r.WorkspaceID, r.Address, nil
}

// MailboxEvent is an outbox event about a mailbox: its kind, its
// workspace and mailbox, the key that makes a second one a duplicate, and
// its payload (stored as JSON, redacted).
type MailboxEvent struct {
	Kind                   string
	WorkspaceID, MailboxID int64
	DedupeKey              string
	Payload                any
}

// InsertEvent writes e to the outbox; a second event with the same dedupe
// key is dropped.
func InsertEvent(ctx context.Context, tx pgx.Tx, e MailboxEvent) error {
	p, err := eventPayload(e.Kind, e.Payload)
	if err != nil {
		return err
	}
	err = sqlcdb.New(tx).EmailEventInsert(ctx, sqlcdb.EmailEventInsertParams{
		Kind: e.Kind, WorkspaceID: &e.WorkspaceID, MailboxID: &e.MailboxID, DedupeKey: e.DedupeKey, Payload: p,
	})
	if err != nil {
		return fmt.Errorf("event %s: %w", e.Kind, err)
	}
	return nil
}

// eventPayload is an event's payload as stored: JSON, redacted.
func eventPayload(kind string, payload any) ([]byte, error) {
	p, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("event %s payload: %w", kind, err)
	}
	if clean := redact.String(string(p)); clean != string(p) {
		// A hidden secret's marker sits inside a JSON string; should it
		// break the document, the payload says so rather than leak.
		if p = []byte(clean); !json.Valid(p) {
			p = []byte(`{"redacted":true}`)
		}
	}
	return p, nil
}

// MailboxCampaigns lists the campaigns a mailbox serves.
func MailboxCampaigns(ctx context.Context, tx pgx.Tx, mailboxID int64) ([]int64, error) {
	ids, err := sqlcdb.New(tx).EmailMailboxCampaigns(ctx, mailboxID)
	if err != nil {
		return nil, fmt.Errorf("mailbox %d campaigns: %w", mailboxID, err)
	}
	return ids, nil
}
