package store

import (
	"context"
	"fmt"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// OpsCampaignRef is a campaign id with its workspace's name.
type OpsCampaignRef struct {
	ID        int64
	Workspace string
}

// OpsCampaignsByName lists the campaigns called name, in workspaceID when it
// is not nil. Several results mean the name needs a workspace.
func OpsCampaignsByName(ctx context.Context, db DBTX, name string, workspaceID *int64) ([]OpsCampaignRef, error) {
	rows, err := sqlcdb.New(db).OpsCampaignByName(ctx, sqlcdb.OpsCampaignByNameParams{Name: name, WorkspaceID: workspaceID})
	return convertRows(rows, err, fmt.Sprintf("campaign %q", name), func(r sqlcdb.OpsCampaignByNameRow) OpsCampaignRef {
		return OpsCampaignRef{ID: r.ID, Workspace: r.Workspace}
	})
}
