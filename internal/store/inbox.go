package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// InboxCheckpoint is where the inbox tick left off in one mailbox.
type InboxCheckpoint struct {
	MailboxID   int64
	WorkspaceID int64
	UIDValidity uint32
	LastUID     uint32
}

// ClaimInbox leases the next mailbox to read for tickID, or returns
// ok=false when every mailbox is read (since tickStarted) or leased.
func ClaimInbox(ctx context.Context, db DBTX, tickStarted time.Time, lease time.Duration, tickID string) (InboxCheckpoint, bool, error) {
	q := sqlcdb.New(db)
	if err := q.InboxCheckpointsEnsure(ctx); err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("inbox checkpoints: %w", err)
	}
	r, err := q.InboxClaim(ctx, sqlcdb.InboxClaimParams{Column1: tickStarted, Column2: lease, Column3: tickID})
	if errors.Is(err, pgx.ErrNoRows) {
		return InboxCheckpoint{}, false, nil
	}
	if err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("claim inbox: %w", err)
	}
	return InboxCheckpoint{MailboxID: r.MailboxID, WorkspaceID: r.WorkspaceID, UIDValidity: uint32(r.UidValidity), LastUID: uint32(r.LastUid)}, true, nil
}

// SaveInboxCheckpoint records progress, and ends the lease when release.
func SaveInboxCheckpoint(ctx context.Context, db DBTX, c InboxCheckpoint, lastError, tickID string, release bool) error {
	err := sqlcdb.New(db).InboxCheckpointSave(ctx, sqlcdb.InboxCheckpointSaveParams{
		MailboxID: c.MailboxID, UidValidity: int64(c.UIDValidity), LastUid: int64(c.LastUID),
		Column4: redact.Stored(lastError), Column5: tickID, Column6: release,
	})
	if err != nil {
		return fmt.Errorf("save inbox checkpoint: %w", err)
	}
	return nil
}

// InboxEnrollments finds the enrollments an inbox message is about: by the
// Message-IDs it names, else (a bounce) by the failed recipients.
func InboxEnrollments(ctx context.Context, db DBTX, mailboxID int64, messageIDs, recipients []string) ([]int64, error) {
	q := sqlcdb.New(db)
	ids, err := q.InboxMatchMessageIds(ctx, sqlcdb.InboxMatchMessageIdsParams{MailboxID: &mailboxID, Column2: messageIDs})
	if err != nil {
		return nil, fmt.Errorf("inbox_match_message_ids: %w", err)
	}
	if len(ids) > 0 || len(recipients) == 0 {
		return ids, nil
	}
	keys := make([]string, len(recipients))
	for i, r := range recipients {
		keys[i] = address.Key(r) // as leads store it
	}
	ids, err = q.InboxMatchRecipients(ctx, sqlcdb.InboxMatchRecipientsParams{MailboxID: &mailboxID, Column2: keys})
	if err != nil {
		return nil, fmt.Errorf("inbox_match_recipients: %w", err)
	}
	return ids, nil
}
