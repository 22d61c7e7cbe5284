package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SendStart is a message about to be handed to SMTP.
type SendStart struct {
	EnrollmentID int64
	Step         int
	MailboxID    int64
	MessageID    string
}

// BeginSends records sends as 'sending' and commits before any of them is
// sent. It returns the enrollments whose row was written; a step that
// already has a row is absent and must not be sent.
func BeginSends(ctx context.Context, db DBTX, starts []SendStart) (map[int64]bool, error) {
	n := len(starts)
	enr, steps, mbs, ids := make([]int64, n), make([]int32, n), make([]int64, n), make([]string, n)
	for i, s := range starts {
		enr[i], steps[i], mbs[i], ids[i] = s.EnrollmentID, int32(s.Step), s.MailboxID, s.MessageID
	}
	rows, err := db.Query(ctx, emailQuery("sends_begin"), enr, steps, mbs, ids)
	if err != nil {
		return nil, fmt.Errorf("record sending: %w", err)
	}
	written, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("record sending: %w", err)
	}
	ok := make(map[int64]bool, len(written))
	for _, id := range written {
		ok[id] = true
	}
	return ok, nil
}

// Send statuses a settlement may set. A failed send was refused by the
// server: nothing was delivered, and a retry takes the row over.
const (
	SendSent   = "sent"
	SendFailed = "failed"
)

// SendResult settles one 'sending' row.
type SendResult struct {
	EnrollmentID int64
	Step         int
	Status       string // SendSent or SendFailed
	SentAt       time.Time
	Error        string
}

// EnrollmentUpdate is an enrollment's state after a tick worked on it.
type EnrollmentUpdate struct {
	ID          int64
	Status      string
	CurrentStep int
	NextSendAt  time.Time
	MailboxID   int64 // 0 keeps the current mailbox
	Attempts    int
	LastError   string
}

// Suppression is an address that must not be mailed again.
type Suppression struct {
	WorkspaceID int64
	Email       string
	Reason      string
}

// Settlement is a group of tick outcomes written in one transaction.
type Settlement struct {
	Sends        []SendResult
	Enrollments  []EnrollmentUpdate
	Suppressions []Suppression
}

// Settle writes a settlement for tickID in tx with one round trip.
func Settle(ctx context.Context, tx pgx.Tx, tickID string, s Settlement) error {
	var (
		b                pgx.Batch
		fEnr             []int64
		fStep            []int32
		fStatus, fErr    []string
		fAt              []time.Time
		uID, uMB         []int64
		uStatus, uErr    []string
		uStep, uAttempts []int32
		uNext            []time.Time
		sWS              []int64
		sEmail, sReason  []string
	)
	for _, r := range s.Sends {
		fEnr, fStep, fStatus, fAt, fErr = append(fEnr, r.EnrollmentID), append(fStep, int32(r.Step)), append(fStatus, r.Status), append(fAt, r.SentAt), append(fErr, r.Error)
	}
	for _, u := range s.Enrollments {
		uID, uStatus, uStep, uNext = append(uID, u.ID), append(uStatus, u.Status), append(uStep, int32(u.CurrentStep)), append(uNext, u.NextSendAt)
		uMB, uAttempts, uErr = append(uMB, u.MailboxID), append(uAttempts, int32(u.Attempts)), append(uErr, u.LastError)
	}
	for _, sp := range s.Suppressions {
		sWS, sEmail, sReason = append(sWS, sp.WorkspaceID), append(sEmail, sp.Email), append(sReason, sp.Reason)
	}
	if len(fEnr) > 0 {
		b.Queue(emailQuery("sends_finish"), fEnr, fStep, fStatus, fAt, fErr)
	}
	if len(uID) > 0 {
		b.Queue(emailQuery("enrollments_settle"), tickID, uID, uStatus, uStep, uNext, uMB, uAttempts, uErr)
	}
	if len(sWS) > 0 {
		b.Queue(emailQuery("suppress"), sWS, sEmail, sReason)
	}
	if b.Len() == 0 {
		return nil
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("settle outcomes: %w", err)
	}
	return nil
}

// PauseMailbox pauses a mailbox until until, or disables it when until is
// nil, and returns its workspace and address.
func PauseMailbox(ctx context.Context, tx pgx.Tx, mailboxID int64, until *time.Time, reason string) (workspaceID int64, address string, err error) {
	err = tx.QueryRow(ctx, emailQuery("mailbox_pause"), mailboxID, until, reason).Scan(&workspaceID, &address)
	if err != nil {
		return 0, "", fmt.Errorf("pause mailbox %d: %w", mailboxID, err)
	}
	return workspaceID, address, nil
}

// InsertEvent writes an outbox event; a second event with the same dedupe
// key is dropped.
func InsertEvent(ctx context.Context, tx pgx.Tx, kind string, workspaceID, mailboxID int64, dedupeKey string, payload any) error {
	p, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("event %s payload: %w", kind, err)
	}
	if _, err := tx.Exec(ctx, emailQuery("event_insert"), kind, workspaceID, mailboxID, dedupeKey, p); err != nil {
		return fmt.Errorf("event %s: %w", kind, err)
	}
	return nil
}

// MailboxCampaigns lists the campaigns a mailbox serves.
func MailboxCampaigns(ctx context.Context, tx pgx.Tx, mailboxID int64) ([]int64, error) {
	rows, err := tx.Query(ctx, emailQuery("mailbox_campaigns"), mailboxID)
	if err != nil {
		return nil, fmt.Errorf("mailbox %d campaigns: %w", mailboxID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("mailbox %d campaigns: %w", mailboxID, err)
	}
	return ids, nil
}
