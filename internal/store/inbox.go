package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
	if _, err := db.Exec(ctx, query("inbox_checkpoints_ensure")); err != nil {
		return InboxCheckpoint{}, false, fmt.Errorf("inbox checkpoints: %w", err)
	}
	var c InboxCheckpoint
	var validity, last int64
	err := db.QueryRow(ctx, query("inbox_claim"), tickStarted, lease, tickID).Scan(&c.MailboxID, &c.WorkspaceID, &validity, &last)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("claim inbox: %w", err)
	}
	c.UIDValidity, c.LastUID = uint32(validity), uint32(last)
	return c, true, nil
}

// SaveInboxCheckpoint records progress, and ends the lease when release.
func SaveInboxCheckpoint(ctx context.Context, db DBTX, c InboxCheckpoint, lastError, tickID string, release bool) error {
	if _, err := db.Exec(ctx, query("inbox_checkpoint_save"), c.MailboxID, int64(c.UIDValidity), int64(c.LastUID), lastError, tickID, release); err != nil {
		return fmt.Errorf("save inbox checkpoint: %w", err)
	}
	return nil
}

// InboxEnrollments finds the enrollments an inbox message is about: by the
// Message-IDs it names, else (a bounce) by the failed recipients.
func InboxEnrollments(ctx context.Context, db DBTX, mailboxID int64, messageIDs, recipients []string) ([]int64, error) {
	ids, err := collectIDs(ctx, db, "inbox_match_message_ids", mailboxID, messageIDs)
	if err != nil || len(ids) > 0 || len(recipients) == 0 {
		return ids, err
	}
	return collectIDs(ctx, db, "inbox_match_recipients", mailboxID, recipients)
}

func collectIDs(ctx context.Context, db DBTX, name string, mailboxID int64, values []string) ([]int64, error) {
	rows, err := db.Query(ctx, query(name), mailboxID, values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ids, nil
}
