package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
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
	r, err := sqlcdb.New(db).OpsWorkspaceByName(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, false, nil
	}
	if err != nil {
		return w, false, fmt.Errorf("workspace %q: %w", name, err)
	}
	return OpsWorkspace{ID: r.ID, Name: r.Name, CeilingUSD: r.CeilingUsd}, true, nil
}

// OpsCampaignRef is a campaign id with its workspace's name.
type OpsCampaignRef struct {
	ID        int64
	Workspace string
}

// OpsCampaignsByName lists the campaigns called name, in workspaceID when it
// is not nil. Several results mean the name needs a workspace.
func OpsCampaignsByName(ctx context.Context, db DBTX, name string, workspaceID *int64) ([]OpsCampaignRef, error) {
	rows, err := sqlcdb.New(db).OpsCampaignByName(ctx, sqlcdb.OpsCampaignByNameParams{Name: name, WorkspaceID: workspaceID})
	if err != nil {
		return nil, fmt.Errorf("campaign %q: %w", name, err)
	}
	refs := make([]OpsCampaignRef, len(rows))
	for i, r := range rows {
		refs[i] = OpsCampaignRef{ID: r.ID, Workspace: r.Workspace}
	}
	return refs, nil
}
