package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// ErrNoMailbox: no mailbox has that id (it was deleted meanwhile).
var ErrNoMailbox = errors.New("no such mailbox")

// MailboxPause is a mailbox's pause: until when and why. A zero Until is
// no pause.
type MailboxPause struct {
	Until  *time.Time
	Reason string
}

// SetMailboxPause sets (until non-nil) or clears (until nil) the pause of
// mailbox id, and returns the pause it replaced.
func SetMailboxPause(ctx context.Context, db DBTX, id int64, until *time.Time, reason string) (MailboxPause, error) {
	p := sqlcdb.MailboxPauseSetParams{ID: id, PausedUntil: until}
	if until != nil {
		p.PauseReason = &reason
	}
	row, err := sqlcdb.New(db).MailboxPauseSet(ctx, p)
	if errors.Is(err, pgx.ErrNoRows) {
		return MailboxPause{}, ErrNoMailbox
	}
	if err != nil {
		return MailboxPause{}, fmt.Errorf("set the pause of mailbox %d: %w", id, err)
	}
	return MailboxPause{Until: row.WasPausedUntil, Reason: row.WasPauseReason}, nil
}
