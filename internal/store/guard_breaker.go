package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
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

// BreakerTripArgs open the (WorkspaceID, Provider) breaker for OpenFor
// and name the event Kinds written for its episode. Exact replaces a longer
// window instead of keeping it; RetryAfter is the provider's Retry-After
// behind the window (0: none).
type BreakerTripArgs struct {
	WorkspaceID int64
	Provider    string
	OpenFor     time.Duration
	Reason      string
	Kinds       []string
	Exact       bool
	RetryAfter  time.Duration
}

// BreakerTrip opens a breaker and writes its events, in one statement.
func BreakerTrip(ctx context.Context, db DBTX, a BreakerTripArgs) (episode int64, until time.Time, err error) {
	r, err := sqlcdb.New(db).GuardBreakerTrip(ctx, sqlcdb.GuardBreakerTripParams{
		WorkspaceID: a.WorkspaceID, Provider: a.Provider, Cooldown: a.OpenFor, Reason: redact.Stored(a.Reason), Kinds: a.Kinds, Force: a.Exact, RetryAfter: a.RetryAfter,
	})
	if err == nil && r.OpenUntil == nil {
		err = errors.New("no open_until")
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("open %s breaker for workspace %d: %w", a.Provider, a.WorkspaceID, err)
	}
	return r.Episode, *r.OpenUntil, nil
}

// BreakerFailureArgs are one transient failure of (WorkspaceID, Provider):
// the Threshold-th in a row opens a closed breaker for OpenFor, remembering
// the provider's RetryAfter behind that window (0: none).
type BreakerFailureArgs struct {
	WorkspaceID int64
	Provider    string
	Threshold   int
	OpenFor     time.Duration
	Reason      string
	RetryAfter  time.Duration
}

// BreakerFailure counts one transient failure. It returns the breaker's
// state.
func BreakerFailure(ctx context.Context, db DBTX, a BreakerFailureArgs) (state string, failures int, err error) {
	r, err := sqlcdb.New(db).GuardBreakerFailure(ctx, sqlcdb.GuardBreakerFailureParams{
		WorkspaceID: a.WorkspaceID, Provider: a.Provider, Threshold: int32(a.Threshold), Cooldown: a.OpenFor, Reason: redact.Stored(a.Reason), RetryAfter: a.RetryAfter,
	})
	if err != nil {
		return "", 0, fmt.Errorf("count %s failure for workspace %d: %w", a.Provider, a.WorkspaceID, err)
	}
	return r.State, int(r.ConsecutiveFailures), nil
}

// BreakerCloseArgs close the (WorkspaceID, Provider) breaker if ProbeOwner
// holds its probe ("" closes it whoever holds it).
type BreakerCloseArgs struct {
	WorkspaceID        int64
	Provider           string
	ProbeOwner, Reason string
}

// BreakerClose closes a breaker and writes breaker_closed. It reports
// whether a row changed.
func BreakerClose(ctx context.Context, db DBTX, a BreakerCloseArgs) (bool, error) {
	n, err := sqlcdb.New(db).GuardBreakerClose(ctx, sqlcdb.GuardBreakerCloseParams{WorkspaceID: a.WorkspaceID, Provider: a.Provider, ProbeOwner: a.ProbeOwner, Reason: redact.Stored(a.Reason)})
	if err != nil {
		return false, fmt.Errorf("close %s breaker for workspace %d: %w", a.Provider, a.WorkspaceID, err)
	}
	return n > 0, nil
}

// BreakerReleaseProbe gives back a claimed but unused half-open probe.
func BreakerReleaseProbe(ctx context.Context, db DBTX, workspaceID int64, provider, probeOwner string) error {
	if err := sqlcdb.New(db).GuardBreakerReleaseProbe(ctx, sqlcdb.GuardBreakerReleaseProbeParams{WorkspaceID: workspaceID, Provider: provider, ProbeOwner: probeOwner}); err != nil {
		return fmt.Errorf("release %s probe for workspace %d: %w", provider, workspaceID, err)
	}
	return nil
}

// Breakers lists every breaker row.
func Breakers(ctx context.Context, db DBTX) ([]BreakerRow, error) {
	rows, err := sqlcdb.New(db).GuardBreakerList(ctx)
	return convertRows(rows, err, "list breakers", func(r sqlcdb.GuardBreakerListRow) BreakerRow {
		return BreakerRow{
			Workspace: r.Name, WorkspaceID: r.WorkspaceID, Provider: r.Provider, State: r.State, OpenUntil: r.OpenUntil,
			Reason: r.Reason, ConsecutiveFailures: int(r.ConsecutiveFailures), ProbeOwner: r.ProbeOwner,
			ProbeUntil: r.ProbeUntil, OpenedAt: r.OpenedAt, Episode: r.Episode, UpdatedAt: r.UpdatedAt,
		}
	})
}

// MarkSecondCharge marks ledger row callID as a possible second charge
// (provider_calls.second_charge): a finder asked again for a lead whose
// earlier answer from it was lost.
func MarkSecondCharge(ctx context.Context, db DBTX, callID int64) error {
	if err := sqlcdb.New(db).ProviderCallSecondCharge(ctx, callID); err != nil {
		return fmt.Errorf("marking call %d a possible second charge: %w", callID, err)
	}
	return nil
}
