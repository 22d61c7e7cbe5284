package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
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
	rows, err := db.Query(ctx, query("email_metrics_mailboxes"))
	if err != nil {
		return nil, fmt.Errorf("email metrics: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EmailMailboxTotals, error) {
		var m EmailMailboxTotals
		err := r.Scan(&m.Workspace, &m.Address, &m.Sent, &m.Failed, &m.Deferred, &m.DeliveryUnknown, &m.Paused)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("email metrics: %w", err)
	}
	return out, nil
}
