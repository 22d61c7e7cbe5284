package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// ClaimedEvent is an outbox event leased for delivery. LockedUntil is the
// claim's identity when marking the outcome.
type ClaimedEvent struct {
	ID          int64
	Kind        string
	WorkspaceID *int64
	Provider    *string
	Payload     json.RawMessage
	CreatedAt   time.Time
	Attempts    int
	LockedUntil time.Time
}

// EventRow is an outbox event as listed.
type EventRow struct {
	ID            int64           `json:"id"`
	Kind          string          `json:"kind"`
	Workspace     string          `json:"workspace"`
	Provider      string          `json:"provider"`
	DedupeKey     string          `json:"dedupe_key"`
	Payload       json.RawMessage `json:"payload"`
	CreatedAt     time.Time       `json:"created_at"`
	Attempts      int             `json:"attempts"`
	NextAttemptAt time.Time       `json:"next_attempt_at"`
	DeliveredAt   *time.Time      `json:"delivered_at"`
	LastError     string          `json:"last_error,omitempty"`
	// Alert: the event is posted to Slack. A breaker episode posts one
	// alert; its other events are only listed.
	Alert bool `json:"alert"`
}

// ClaimEvents leases up to limit due undelivered events for lease.
func ClaimEvents(ctx context.Context, db DBTX, limit int, lease time.Duration) ([]ClaimedEvent, error) {
	rows, err := sqlcdb.New(db).GuardEventsClaim(ctx, sqlcdb.GuardEventsClaimParams{Batch: int32(limit), Lease: lease})
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	var out []ClaimedEvent
	for _, r := range rows {
		if r.LockedUntil == nil {
			return nil, fmt.Errorf("claim events: event %d claimed without a lease", r.ID)
		}
		out = append(out, ClaimedEvent{
			ID: r.ID, Kind: r.Kind, WorkspaceID: r.WorkspaceID, Provider: r.Provider, Payload: r.Payload,
			CreatedAt: r.CreatedAt, Attempts: int(r.Attempts), LockedUntil: *r.LockedUntil,
		})
	}
	return out, nil
}

// MarkEventDelivered records a delivery; false means the claim was lost
// (its lease ran out and another deliverer took the event).
func MarkEventDelivered(ctx context.Context, db DBTX, id int64, lease time.Time) (bool, error) {
	n, err := sqlcdb.New(db).GuardEventsDelivered(ctx, sqlcdb.GuardEventsDeliveredParams{ID: id, LockedUntil: lease})
	if err != nil {
		return false, fmt.Errorf("mark event %d delivered: %w", id, err)
	}
	return n == 1, nil
}

// EventFailure is a failed delivery of event ID, claimed until Lease: to
// be retried after RetryIn, failing with Reason.
type EventFailure struct {
	ID      int64
	Lease   time.Time
	RetryIn time.Duration
	Reason  string
}

// MarkEventFailed records a failed delivery.
func MarkEventFailed(ctx context.Context, db DBTX, f EventFailure) error {
	err := sqlcdb.New(db).GuardEventsFailed(ctx, sqlcdb.GuardEventsFailedParams{ID: f.ID, LockedUntil: f.Lease, Backoff: f.RetryIn, LastError: redact.Stored(f.Reason)})
	if err != nil {
		return fmt.Errorf("mark event %d failed: %w", f.ID, err)
	}
	return nil
}

// Events lists up to limit events, newest first.
func Events(ctx context.Context, db DBTX, limit int, undeliveredOnly bool) ([]EventRow, error) {
	rows, err := sqlcdb.New(db).GuardEventsList(ctx, sqlcdb.GuardEventsListParams{MaxEvents: int32(limit), PendingOnly: undeliveredOnly})
	return convertRows(rows, err, "list events", func(r sqlcdb.GuardEventsListRow) EventRow {
		return EventRow{
			ID: r.ID, Kind: r.Kind, Workspace: r.Workspace, Provider: r.Provider, DedupeKey: r.DedupeKey, Payload: r.Payload,
			CreatedAt: r.CreatedAt, Attempts: int(r.Attempts), NextAttemptAt: r.NextAttemptAt, DeliveredAt: r.DeliveredAt,
			LastError: r.LastError, Alert: r.Alert,
		}
	})
}
