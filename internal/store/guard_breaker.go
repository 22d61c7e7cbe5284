package store

import (
	"context"
	"fmt"
	"time"
)

// BreakerRow is one breaker with its workspace name.
type BreakerRow struct {
	Workspace           string     `json:"workspace"`
	WorkspaceID         int64      `json:"workspace_id"`
	Provider            string     `json:"provider"`
	State               string     `json:"state"`
	OpenUntil           *time.Time `json:"open_until"`
	Reason              *string    `json:"reason"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	ProbeOwner          *string    `json:"probe_owner"`
	ProbeUntil          *time.Time `json:"probe_until"`
	OpenedAt            *time.Time `json:"opened_at"`
	Episode             int64      `json:"episode"`
	UpdatedAt           time.Time  `json:"updated_at"`
}

// BreakerTrip opens the (workspace, provider) breaker for openFor and
// writes the event kinds for its episode in the same statement. exact
// replaces a longer window instead of keeping it.
func BreakerTrip(ctx context.Context, db DBTX, workspaceID int64, provider string, openFor time.Duration, reason string, kinds []string, exact bool) (episode int64, until time.Time, err error) {
	var written int64
	err = db.QueryRow(ctx, query("guard_breaker_trip"), workspaceID, provider, openFor, reason, kinds, exact).Scan(&episode, &until, &written)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("open %s breaker for workspace %d: %w", provider, workspaceID, err)
	}
	return episode, until, nil
}

// BreakerFailure counts one transient failure; the threshold-th in a row
// opens a closed breaker for openFor. It returns the breaker's state.
func BreakerFailure(ctx context.Context, db DBTX, workspaceID int64, provider string, threshold int, openFor time.Duration, reason string) (state string, failures int, err error) {
	var until *time.Time
	err = db.QueryRow(ctx, query("guard_breaker_failure"), workspaceID, provider, threshold, openFor, reason).Scan(&state, &until, &failures)
	if err != nil {
		return "", 0, fmt.Errorf("count %s failure for workspace %d: %w", provider, workspaceID, err)
	}
	return state, failures, nil
}

// BreakerClose closes the breaker if probeOwner holds its probe ("" closes
// it whoever holds it) and writes breaker_closed. It reports whether a row
// changed.
func BreakerClose(ctx context.Context, db DBTX, workspaceID int64, provider, probeOwner, reason string) (bool, error) {
	var n int64
	if err := db.QueryRow(ctx, query("guard_breaker_close"), workspaceID, provider, probeOwner, reason).Scan(&n); err != nil {
		return false, fmt.Errorf("close %s breaker for workspace %d: %w", provider, workspaceID, err)
	}
	return n > 0, nil
}

// BreakerReleaseProbe gives back a claimed but unused half-open probe.
func BreakerReleaseProbe(ctx context.Context, db DBTX, workspaceID int64, provider, probeOwner string) error {
	if _, err := db.Exec(ctx, query("guard_breaker_release_probe"), workspaceID, provider, probeOwner); err != nil {
		return fmt.Errorf("release %s probe for workspace %d: %w", provider, workspaceID, err)
	}
	return nil
}

// Breakers lists every breaker row.
func Breakers(ctx context.Context, db DBTX) ([]BreakerRow, error) {
	rows, err := db.Query(ctx, query("guard_breaker_list"))
	if err != nil {
		return nil, fmt.Errorf("list breakers: %w", err)
	}
	defer rows.Close()
	out := []BreakerRow{}
	for rows.Next() {
		var b BreakerRow
		if err := rows.Scan(&b.Workspace, &b.WorkspaceID, &b.Provider, &b.State, &b.OpenUntil, &b.Reason,
			&b.ConsecutiveFailures, &b.ProbeOwner, &b.ProbeUntil, &b.OpenedAt, &b.Episode, &b.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list breakers: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
