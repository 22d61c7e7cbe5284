package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// CreditsAccount is a provider account's last credits reading.
type CreditsAccount struct {
	Account     string
	Provider    string
	WorkspaceID *int64
	// Workspace owns the key; "" for the host's key.
	Workspace string
	Credits   *int64
	ResetAt   *time.Time
	ReadAt    *time.Time
	ReadError string
	Low       bool
	Episode   int64
}

// ClaimCreditsRead reports whether this process should read account's
// credits now: never read, or read every ago or earlier, and nobody else
// reading it (a claim lasts lease).
func ClaimCreditsRead(ctx context.Context, db DBTX, account, provider string, workspaceID *int64, every, lease time.Duration) (bool, error) {
	rows, err := sqlcdb.New(db).CreditsClaim(ctx, sqlcdb.CreditsClaimParams{
		Account: account, Provider: provider, WorkspaceID: workspaceID, Lease: lease, Every: every,
	})
	if err != nil {
		return false, fmt.Errorf("claim the credits reading of %s: %w", account, err)
	}
	return len(rows) == 1, nil
}

// RecordCredits records a reading of account's credits: credits and
// resetAt, or, when credits is nil, why the reading failed (readError).
func RecordCredits(ctx context.Context, db DBTX, account string, credits *int64, resetAt *time.Time, readError string) error {
	err := sqlcdb.New(db).CreditsRecord(ctx, sqlcdb.CreditsRecordParams{
		Account: account, Credits: credits, ResetAt: resetAt, ReadError: nullText(redact.Stored(readError)),
	})
	if err != nil {
		return fmt.Errorf("record the credits of %s: %w", account, err)
	}
	return nil
}

// CreditsPace counts the billed calls of the last hour on provider's
// account: workspaceID's own key, or the host's (nil).
func CreditsPace(ctx context.Context, db DBTX, provider string, workspaceID *int64) (int64, error) {
	n, err := sqlcdb.New(db).CreditsPace(ctx, sqlcdb.CreditsPaceParams{Provider: provider, WorkspaceID: workspaceID})
	if err != nil {
		return 0, fmt.Errorf("count the last hour's %s calls: %w", provider, err)
	}
	return n, nil
}

// CreditsAccounts lists every account's last reading.
func CreditsAccounts(ctx context.Context, db DBTX) ([]CreditsAccount, error) {
	rows, err := sqlcdb.New(db).CreditsList(ctx)
	return convertRows(rows, err, "list provider credits", func(r sqlcdb.CreditsListRow) CreditsAccount {
		a := CreditsAccount{Account: r.Account, Provider: r.Provider, WorkspaceID: r.WorkspaceID, Workspace: r.Workspace,
			Credits: r.Credits, ResetAt: r.ResetAt, ReadAt: r.ReadAt, Low: r.Low, Episode: r.Episode}
		if r.ReadError != nil {
			a.ReadError = *r.ReadError
		}
		return a
	})
}

// CreditsAlert is what a credits_low alert says beside the account.
type CreditsAlert struct {
	Runway     string
	PerHour    int64
	AlertUnder string
}

// MarkCreditsLow sets whether account's runway is under its threshold; the
// move to low starts an episode and writes its credits_low event in the
// same statement. It reports whether it wrote one.
func MarkCreditsLow(ctx context.Context, db DBTX, account string, low bool, a CreditsAlert) (bool, error) {
	n, err := sqlcdb.New(db).CreditsMark(ctx, sqlcdb.CreditsMarkParams{
		Account: account, Low: low, Runway: a.Runway, PerHour: a.PerHour, AlertUnder: a.AlertUnder,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("mark the credits of %s: %w", account, err)
	}
	return n > 0, nil
}

// CreditsReportRow is one workspace × provider of `rindactl providers`.
type CreditsReportRow struct {
	WorkspaceID    int64
	Workspace      string
	Provider       string
	OwnKey         bool
	Credits        *int64
	ReadAt         *time.Time
	ReadError      string
	ResetAt        *time.Time
	Low            bool
	MonthSpentUSD  float64
	CallsLastHour  int64
	BilledLastHour int64
}

// CreditsReport lists every workspace (or workspaceID's) × providers row.
func CreditsReport(ctx context.Context, db DBTX, providers []string, workspaceID *int64) ([]CreditsReportRow, error) {
	rows, err := sqlcdb.New(db).CreditsReport(ctx, sqlcdb.CreditsReportParams{Providers: providers, WorkspaceID: workspaceID})
	return convertRows(rows, err, "provider credits report", func(r sqlcdb.CreditsReportRow) CreditsReportRow {
		out := CreditsReportRow{WorkspaceID: r.WorkspaceID, Workspace: r.Workspace, Provider: r.Provider, OwnKey: r.OwnKey,
			Credits: r.Credits, ReadAt: r.ReadAt, ResetAt: r.ResetAt, MonthSpentUSD: r.MonthSpentUsd,
			CallsLastHour: r.CallsLastHour, BilledLastHour: r.BilledLastHour}
		if r.ReadError != nil {
			out.ReadError = *r.ReadError
		}
		if r.Low != nil {
			out.Low = *r.Low
		}
		return out
	})
}
