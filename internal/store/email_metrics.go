package store

import (
	"context"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// EmailMailboxTotals is one mailbox's running email totals.
type EmailMailboxTotals struct {
	Workspace, Address                      string
	Sent, Failed, Deferred, DeliveryUnknown int64
	// Paused: disabled, or paused until later.
	Paused bool
}

// EmailMetricsMailboxes reads every mailbox's running totals.
func EmailMetricsMailboxes(ctx context.Context, db DBTX) ([]EmailMailboxTotals, error) {
	rows, err := sqlcdb.New(db).EmailMetricsMailboxes(ctx)
	return convertRows(rows, err, "email metrics", func(r sqlcdb.EmailMetricsMailboxesRow) EmailMailboxTotals {
		return EmailMailboxTotals{
			Workspace: r.Workspace, Address: r.Address, Sent: r.Sent, Failed: r.Failed, Deferred: r.Deferred,
			DeliveryUnknown: r.DeliveryUnknown, Paused: r.Paused,
		}
	})
}
