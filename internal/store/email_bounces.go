package store

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// MailboxBounces is what the bounce-rate guard reads for one mailbox; see
// queries/email_mailbox_bounces.sql.
type MailboxBounces struct {
	WorkspaceID int64
	Address     string
	// Paused: the mailbox sends nothing now (paused or disabled), until
	// PausedUntil (now for a disabled one).
	Paused      bool
	PausedUntil time.Time
	// Sends counts its last sends that reached a server (at most the
	// window), Bounces the hard bounces among them, Streak the newest of
	// them that bounced in a row.
	Sends, Bounces, Streak int64
	// RateMax and StreakMax are the strictest limits of its campaigns; 0
	// turns one off.
	RateMax   float64
	StreakMax int
}

// BounceLimits are the guard's window and the limits of a mailbox that
// belongs to no campaign.
type BounceLimits struct {
	Window    int
	RateMax   float64
	StreakMax int
}

// MailboxBounceStats reads the guard's inputs for a mailbox.
func MailboxBounceStats(ctx context.Context, db DBTX, mailboxID int64, lim BounceLimits) (MailboxBounces, error) {
	r, err := sqlcdb.New(db).EmailMailboxBounces(ctx, sqlcdb.EmailMailboxBouncesParams{
		MailboxID: mailboxID, WindowSends: int32(lim.Window), RateDefault: lim.RateMax, StreakDefault: int32(lim.StreakMax),
	})
	if err != nil {
		return MailboxBounces{}, fmt.Errorf("mailbox %d bounces: %w", mailboxID, err)
	}
	return MailboxBounces{WorkspaceID: r.WorkspaceID, Address: r.Address, Paused: r.Paused, PausedUntil: r.PausedUntil, Sends: r.Sends, Bounces: r.Bounces,
		Streak: r.Streak, RateMax: r.RateMax, StreakMax: int(r.StreakMax)}, nil
}
