package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// OpsWorkspace is a workspace as the operator commands see it.
type OpsWorkspace struct {
	ID   int64
	Name string
	// CeilingUSD is nil when the workspace has no monthly ceiling.
	CeilingUSD *float64
}

// OpsWorkspaceByName finds a workspace by name; found is false when none.
func OpsWorkspaceByName(ctx context.Context, db DBTX, name string) (w OpsWorkspace, found bool, err error) {
	err = db.QueryRow(ctx, query("ops_workspace_by_name"), name).Scan(&w.ID, &w.Name, &w.CeilingUSD)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, false, nil
	}
	if err != nil {
		return w, false, fmt.Errorf("workspace %q: %w", name, err)
	}
	return w, true, nil
}

// OpsCampaignRef is a campaign id with its workspace's name.
type OpsCampaignRef struct {
	ID        int64
	Workspace string
}

// OpsCampaignsByName lists the campaigns called name, in workspaceID when it
// is not nil. Several results mean the name needs a workspace.
func OpsCampaignsByName(ctx context.Context, db DBTX, name string, workspaceID *int64) ([]OpsCampaignRef, error) {
	rows, err := db.Query(ctx, query("ops_campaign_by_name"), name, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("campaign %q: %w", name, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsCampaignRef, error) {
		var c OpsCampaignRef
		return c, r.Scan(&c.ID, &c.Workspace)
	})
}
