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
	// CreditsAt is when Credits was read (a failed reading since moved
	// ReadAt only).
	CreditsAt *time.Time
	ReadError string
	Low       bool
	Episode   int64
}

// CreditsReadClaim asks for the turn to read account's credits (a
// workspace's own key, or the host's: WorkspaceID nil): due when never
// read, or read Every ago or earlier; the claim lasts Lease.
type CreditsReadClaim struct {
	Account, Provider string
	WorkspaceID       *int64
	Every, Lease      time.Duration
}

// ClaimCreditsRead reports whether this process should read c's account's
// credits now: due, and nobody else reading it. at is the claim's database
// time, which RecordCredits records the reading at.
func ClaimCreditsRead(ctx context.Context, db DBTX, c CreditsReadClaim) (at time.Time, mine bool, err error) {
	rows, err := sqlcdb.New(db).CreditsClaim(ctx, sqlcdb.CreditsClaimParams{
		Account: c.Account, Provider: c.Provider, WorkspaceID: c.WorkspaceID, Lease: c.Lease, Every: c.Every,
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("claim the credits reading of %s: %w", c.Account, err)
	}
	if len(rows) != 1 {
		return time.Time{}, false, nil
	}
	return rows[0].ClaimedAt, true, nil
}

// CreditsReading is a reading of Account's credits taken at ReadAt:
// Credits and ResetAt, or, when Credits is nil, why the reading failed
// (ReadError).
type CreditsReading struct {
	Account   string
	ReadAt    time.Time
	Credits   *int64
	ResetAt   *time.Time
	ReadError string
}

// RecordCredits records r.
func RecordCredits(ctx context.Context, db DBTX, r CreditsReading) error {
	err := sqlcdb.New(db).CreditsRecord(ctx, sqlcdb.CreditsRecordParams{
		Account: r.Account, Credits: r.Credits, ResetAt: r.ResetAt, ReadError: nullText(redact.Stored(r.ReadError)), ReadAt: r.ReadAt,
	})
	if err != nil {
		return fmt.Errorf("record the credits of %s: %w", r.Account, err)
	}
	return nil
}

// CreditsUsage counts the billed calls on provider's account
// (workspaceID's own key, or the host's: nil) in the last hour and since
// since (its last credits reading).
func CreditsUsage(ctx context.Context, db DBTX, provider string, workspaceID *int64, since time.Time) (perHour, billedSince int64, err error) {
	r, err := sqlcdb.New(db).CreditsUsage(ctx, sqlcdb.CreditsUsageParams{Provider: provider, WorkspaceID: workspaceID, Since: since})
	if err != nil {
		return 0, 0, fmt.Errorf("count the billed %s calls: %w", provider, err)
	}
	return r.BilledHour, r.BilledSince, nil
}

// CreditsAccounts lists every account's last reading.
func CreditsAccounts(ctx context.Context, db DBTX) ([]CreditsAccount, error) {
	rows, err := sqlcdb.New(db).CreditsList(ctx)
	return convertRows(rows, err, "list provider credits", func(r sqlcdb.CreditsListRow) CreditsAccount {
		a := CreditsAccount{Account: r.Account, Provider: r.Provider, WorkspaceID: r.WorkspaceID, Workspace: r.Workspace,
			Credits: r.Credits, ResetAt: r.ResetAt, ReadAt: r.ReadAt, CreditsAt: r.CreditsAt, Low: r.Low, Episode: r.Episode}
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
	CreditsAt      *time.Time
	ReadError      string
	ResetAt        *time.Time
	Low            bool
	MonthSpentUSD  float64
	CallsLastHour  int64
	BilledLastHour int64
	// SecondChargesMonth counts the workspace's calls this month that asked
	// a finder again after its answer was lost: possibly billed twice.
	SecondChargesMonth int64
}

// CreditsReport lists every workspace (or workspaceID's) × providers row.
func CreditsReport(ctx context.Context, db DBTX, providers []string, workspaceID *int64) ([]CreditsReportRow, error) {
	rows, err := sqlcdb.New(db).CreditsReport(ctx, sqlcdb.CreditsReportParams{Providers: providers, WorkspaceID: workspaceID})
	return convertRows(rows, err, "provider credits report", func(r sqlcdb.CreditsReportRow) CreditsReportRow {
		out := CreditsReportRow{WorkspaceID: r.WorkspaceID, Workspace: r.Workspace, Provider: r.Provider, OwnKey: r.OwnKey,
			Credits: r.Credits, ReadAt: r.ReadAt, CreditsAt: r.CreditsAt, ResetAt: r.ResetAt, MonthSpentUSD: r.MonthSpentUsd,
			CallsLastHour: r.CallsLastHour, BilledLastHour: r.BilledLastHour, SecondChargesMonth: r.SecondChargesMonth}
		if r.ReadError != nil {
			out.ReadError = *r.ReadError
		}
		if r.Low != nil {
			out.Low = *r.Low
		}
		return out
	})
}
