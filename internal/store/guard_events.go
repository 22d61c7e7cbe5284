package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
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
	rows, err := db.Query(ctx, query("guard_events_claim"), limit, lease)
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	defer rows.Close()
	var out []ClaimedEvent
	for rows.Next() {
		var e ClaimedEvent
		var payload []byte
		if err := rows.Scan(&e.ID, &e.Kind, &e.WorkspaceID, &e.Provider, &payload, &e.CreatedAt, &e.Attempts, &e.LockedUntil); err != nil {
			return nil, fmt.Errorf("claim events: %w", err)
		}
		e.Payload = payload
		out = append(out, e)
	}
	return out, rows.Err()
}

// MarkEventDelivered records a delivery; false means the claim was lost
// (its lease ran out and another deliverer took the event).
func MarkEventDelivered(ctx context.Context, db DBTX, id int64, lease time.Time) (bool, error) {
	tag, err := db.Exec(ctx, query("guard_events_delivered"), id, lease)
	if err != nil {
		return false, fmt.Errorf("mark event %d delivered: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// MarkEventFailed records a failed delivery to be retried after retryIn.
func MarkEventFailed(ctx context.Context, db DBTX, id int64, lease time.Time, retryIn time.Duration, reason string) error {
	if _, err := db.Exec(ctx, query("guard_events_failed"), id, lease, retryIn, reason); err != nil {
		return fmt.Errorf("mark event %d failed: %w", id, err)
	}
	return nil
}

// Events lists up to limit events, newest first.
func Events(ctx context.Context, db DBTX, limit int, undeliveredOnly bool) ([]EventRow, error) {
	rows, err := db.Query(ctx, query("guard_events_list"), limit, undeliveredOnly)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	out := []EventRow{}
	for rows.Next() {
		var e EventRow
		var payload []byte
		if err := rows.Scan(&e.ID, &e.Kind, &e.Workspace, &e.Provider, &e.DedupeKey, &payload, &e.CreatedAt,
			&e.Attempts, &e.NextAttemptAt, &e.DeliveredAt, &e.LastError, &e.Alert); err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		e.Payload = payload
		out = append(out, e)
	}
	return out, rows.Err()
}
