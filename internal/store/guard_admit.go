package store

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// GuardAdmitParams is one intended provider call and the limits it is
// admitted under.
type GuardAdmitParams struct {
	WorkspaceID int64
	Provider    string
	LeadID      int64
	TickID      string
	// ProbeOwner names this call if it becomes the half-open probe;
	// ProbeLease is how long the probe is reserved for it.
	ProbeOwner string
	ProbeLease time.Duration
	// BucketKey is the GCRA row; "" admits without a token.
	BucketKey string
	// Interval is the bucket's emission interval (1/rate); Horizon is how
	// far ahead of now the theoretical arrival time may run: burst*Interval
	// plus the longest wait the caller accepts.
	Interval time.Duration
	Horizon  time.Duration
	// Tolerance is the bucket's burst*Interval: the call's rate slot, kept
	// in the ledger row's call_at, is its new tat less it.
	Tolerance time.Duration
	CostUSD   float64
}

// GuardAdmitRow is the admit statement's answer. Breaker is "closed",
// "probe" (this call claimed the half-open probe) or "open".
type GuardAdmitRow struct {
	Breaker    string
	OpenUntil  *time.Time
	ProbeUntil *time.Time
	// Reason is what opened the breaker (an error kind or an operator's
	// words); RetryAfter the provider's Retry-After behind its window.
	Reason       *string
	RetryAfter   *time.Duration
	UnderCeiling *bool
	TAT          *time.Time
	Granted      *bool
	CallID       *int64
	NextMonth    time.Time
	Now          time.Time
}

// GuardAdmit runs the single admit statement (breaker, bucket, ceiling,
// ledger).
func GuardAdmit(ctx context.Context, db DBTX, p GuardAdmitParams) (GuardAdmitRow, error) {
	var r GuardAdmitRow
	var next *time.Time
	var durable string
	err := db.QueryRow(ctx, query("guard_admit"),
		p.WorkspaceID, p.Provider, p.LeadID, p.TickID, p.ProbeOwner, p.ProbeLease,
		p.BucketKey, p.Interval, p.Horizon, p.CostUSD, p.Tolerance,
	).Scan(&r.Breaker, &r.OpenUntil, &r.ProbeUntil, &r.Reason, &r.RetryAfter, &r.UnderCeiling, &r.TAT, &r.Granted, &r.CallID, &next, &r.Now, &durable)
	if err != nil {
		return r, fmt.Errorf("admit %s call for workspace %d: %w", p.Provider, p.WorkspaceID, err)
	}
	if r.UnderCeiling == nil || next == nil {
		return r, fmt.Errorf("admit %s call: workspace %d does not exist", p.Provider, p.WorkspaceID)
	}
	r.NextMonth = *next
	return r, nil
}

// GuardSettle settles (state "settled") or refunds (state "refunded") the
// ledger row callID and, after a clean answer, clears the breaker's failure
// streak. A settled call's found address (a finder's find; "" for none) is
// kept with its lead in the same statement, so a paid find is never
// recorded without its address. The commit is durable whatever the
// server's synchronous_commit. It reports whether the row was still
// reserved: false when an earlier try or a claim settled it already.
//
// It is planned on every run: the ledger grows a row per call, and a plan
// cached while it was small (a young install's first ticks) scanned all of
// it for every call. A call waits on its provider for far longer than
// planning takes.
func GuardSettle(ctx context.Context, db DBTX, callID int64, state, outcome string, workspaceID int64, provider string, clean bool, found string) (bool, error) {
	r, err := sqlcdb.New(plannedPerRun{db}).GuardSettle(ctx, sqlcdb.GuardSettleParams{
		Column1: callID, Column2: state, Column3: outcome, Column4: workspaceID, Column5: provider, Column6: clean, Column7: found,
	})
	if err != nil {
		return false, fmt.Errorf("settle %s call %d: %w", provider, callID, err)
	}
	// Count is the settled rows; Count_2, Count_3 and Count_4 the
	// refunded, healed and kept.
	return r.Count == 1, nil
}

// GuardCallStarted marks the admitted call callID, which waited for its
// rate slot, as going out now; durable before the request is sent. It
// reports whether the call was still reserved (false: a claim took its
// lead over meanwhile, and the call must not go out).
func GuardCallStarted(ctx context.Context, db DBTX, callID int64) (bool, error) {
	r, err := sqlcdb.New(db).GuardCallStarted(ctx, callID)
	if err != nil {
		return false, fmt.Errorf("mark call %d started: %w", callID, err)
	}
	return r.Started == 1, nil
}
