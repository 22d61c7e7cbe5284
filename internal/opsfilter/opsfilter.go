// Package opsfilter resolves the workspace and campaign names operator
// commands filter by (status, why, requeue) to ids, with one set of
// messages for names that do not resolve.
package opsfilter

import (
	"context"
	"errors"
	"fmt"

	"github.com/rindactl/rindactl/internal/store"
)

// Error is a filter that cannot be run as given; Msg names the fix.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Resolve returns the ids of the named workspace and campaign; an empty
// name resolves to nil (any). A campaign name several workspaces use needs
// the workspace. Names that do not resolve are an *Error.
func Resolve(ctx context.Context, db store.DBTX, workspace, campaign string) (workspaceID, campaignID *int64, err error) {
	if workspace != "" {
		id, err := store.WorkspaceID(ctx, db, workspace)
		if errors.Is(err, store.ErrNoWorkspace) {
			return nil, nil, &Error{fmt.Sprintf("unknown workspace %q (see 'rindactl workspace list')", workspace)}
		}
		if err != nil {
			return nil, nil, err
		}
		workspaceID = &id
	}
	if campaign != "" {
		refs, err := store.OpsCampaignsByName(ctx, db, campaign, workspaceID)
		if err != nil {
			return nil, nil, err
		}
		switch len(refs) {
		case 0:
			return nil, nil, &Error{fmt.Sprintf("unknown campaign %q", campaign)}
		case 1:
			campaignID = &refs[0].ID
		default:
			return nil, nil, &Error{fmt.Sprintf("campaign %q exists in %d workspaces: add --workspace", campaign, len(refs))}
		}
	}
	return workspaceID, campaignID, nil
}
