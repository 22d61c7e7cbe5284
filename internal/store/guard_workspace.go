package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrNoWorkspace is returned when a workspace name matches none.
var ErrNoWorkspace = errors.New("no such workspace")

// WorkspaceSpend is a workspace with its ceiling and month-to-date spend.
type WorkspaceSpend struct {
	ID                int64    `json:"id"`
	Name              string   `json:"name"`
	MonthlyUSDCeiling *float64 `json:"monthly_usd_ceiling"`
	MonthSpentUSD     float64  `json:"month_spent_usd"`
	MonthCalls        int64    `json:"month_calls"`
}

// WorkspaceID looks a workspace up by name.
func WorkspaceID(ctx context.Context, db DBTX, name string) (int64, error) {
	var id int64
	err := db.QueryRow(ctx, query("guard_workspace_by_name"), name).Scan(&id)
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
	rows, err := db.Query(ctx, query("guard_workspace_list"))
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	defer rows.Close()
	out := []WorkspaceSpend{}
	for rows.Next() {
		var w WorkspaceSpend
		if err := rows.Scan(&w.ID, &w.Name, &w.MonthlyUSDCeiling, &w.MonthSpentUSD, &w.MonthCalls); err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// SetWorkspaceCeiling sets (nil clears) a workspace's monthly USD ceiling
// and writes the audit row in the same statement.
func SetWorkspaceCeiling(ctx context.Context, db DBTX, name string, ceiling *float64, actor string) (WorkspaceSpend, error) {
	var w WorkspaceSpend
	err := db.QueryRow(ctx, query("guard_workspace_set_ceiling"), name, ceiling, actor).Scan(&w.ID, &w.Name, &w.MonthlyUSDCeiling)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, fmt.Errorf("workspace %q: %w", name, ErrNoWorkspace)
	}
	if err != nil {
		return w, fmt.Errorf("set ceiling of workspace %q: %w", name, err)
	}
	return w, nil
}
