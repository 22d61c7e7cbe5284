package store

import (
	"context"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// OpsMailboxState is a mailbox as `why mailbox` explains it.
type OpsMailboxState struct {
	ID, WorkspaceID int64
	Workspace       string
	Address         string
	Status          string
	PausedUntil     *time.Time
	PauseReason     string
	// ReadsInbox: it has an imap_url. The checkpoint fields are zero until
	// an inbox tick first claimed it.
	ReadsInbox           bool
	UIDValidity, LastUID uint32
	CheckedAt            *time.Time
	LastError            string
	LockedBy             string
	LockedUntil          *time.Time
}

// OpsFindMailboxes finds the mailboxes with this address, in one workspace
// when workspaceID is set.
func OpsFindMailboxes(ctx context.Context, db DBTX, address string, workspaceID *int64) ([]OpsMailboxState, error) {
	rows, err := sqlcdb.New(db).OpsWhyMailbox(ctx, sqlcdb.OpsWhyMailboxParams{Address: address, WorkspaceID: workspaceID})
	return convertRows(rows, err, "mailbox", func(r sqlcdb.OpsWhyMailboxRow) OpsMailboxState {
		m := OpsMailboxState{ID: r.ID, WorkspaceID: r.WorkspaceID, Workspace: r.Workspace, Address: r.Address, Status: r.Status,
			PausedUntil: r.PausedUntil, PauseReason: r.PauseReason, ReadsInbox: r.ReadsInbox, CheckedAt: r.CheckedAt, LockedUntil: r.LockedUntil}
		if r.UidValidity != nil {
			m.UIDValidity, m.LastUID = uint32(*r.UidValidity), uint32(*r.LastUid)
		}
		if r.LastError != nil {
			m.LastError = *r.LastError
		}
		if r.LockedBy != nil {
			m.LockedBy = *r.LockedBy
		}
		return m
	})
}
