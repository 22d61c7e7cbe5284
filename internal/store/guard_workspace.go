package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// ErrNoWorkspace is returned when a workspace name matches none.
var ErrNoWorkspace = errors.New("no such workspace")

// WorkspaceSpend is a workspace with its ceiling and month-to-date spend.
type WorkspaceSpend struct {
	ID                int64    `json:"id"`
	Name              string   `json:"name"`
	MonthlyUSDCeiling *float64 `json:"monthly_usd_ceiling"`
	MonthSpentUSD     float64  `json:"month_spent_usd"`
	// MonthCallsMade counts this month's provider calls that went out;
	// MonthCallsBilled those whose cost the ledger keeps. MonthCalls is
	// the billed count under its older name.
	MonthCallsMade   int64 `json:"month_calls_made"`
	MonthCallsBilled int64 `json:"month_calls_billed"`
	MonthCalls       int64 `json:"month_calls"`
}

// WorkspaceID looks a workspace up by name; a name that matches none is
// ErrNoWorkspace.
func WorkspaceID(ctx context.Context, db DBTX, name string) (int64, error) {
	id, err := sqlcdb.New(db).WorkspaceIDByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("workspace %q: %w", name, ErrNoWorkspace)
	}
	if err != nil {
		return 0, fmt.Errorf("look up workspace %q: %w", name, err)
	}
	return id, nil
}

// WorkspaceSpends lists every workspace with its spend this UTC month.
func WorkspaceSpends(ctx context.Context, db DBTX) ([]WorkspaceSpend, error) {
	rows, err := sqlcdb.New(db).GuardWorkspaceList(ctx)
	return convertRows(rows, err, "list workspaces", func(r sqlcdb.GuardWorkspaceListRow) WorkspaceSpend {
		return WorkspaceSpend{ID: r.ID, Name: r.Name, MonthlyUSDCeiling: r.MonthlyUsdCeiling, MonthSpentUSD: r.SpentUsd,
			MonthCallsMade: r.CallsMade, MonthCallsBilled: r.CallsBilled, MonthCalls: r.CallsBilled}
	})
}

// SetWorkspaceCeiling sets (nil clears) a workspace's monthly USD ceiling
// and writes the audit row in the same statement.
func SetWorkspaceCeiling(ctx context.Context, db DBTX, name string, ceiling *float64, actor string) (WorkspaceSpend, error) {
	r, err := sqlcdb.New(db).GuardWorkspaceSetCeiling(ctx, sqlcdb.GuardWorkspaceSetCeilingParams{Name: name, MonthlyUsdCeiling: ceiling, Actor: actor})
	if errors.Is(err, pgx.ErrNoRows) {
		return WorkspaceSpend{}, fmt.Errorf("workspace %q: %w", name, ErrNoWorkspace)
	}
	if err != nil {
		return WorkspaceSpend{}, fmt.Errorf("set ceiling of workspace %q: %w", name, err)
	}
	return WorkspaceSpend{ID: r.ID, Name: r.Name, MonthlyUSDCeiling: r.MonthlyUsdCeiling}, nil
}
