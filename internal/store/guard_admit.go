package store

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/faults"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// GuardAdmitParams is what a group of intended provider calls for one
// workspace and provider share, and the limits they are admitted under.
type GuardAdmitParams struct {
	WorkspaceID int64
	Provider    string
	TickID      string
	// ProbeLease is how long a half-open probe is reserved for its caller.
	ProbeLease time.Duration
	// BucketKey is the GCRA row; "" admits without a token.
	BucketKey string
	// Interval is the bucket's emission interval (1/rate).
	Interval time.Duration
	// Tolerance is the bucket's burst*Interval: a call's rate slot less it,
	// kept in the ledger row's call_at, is when the call goes out.
	Tolerance time.Duration
	CostUSD   float64
}

// GuardAdmitCall is one call of a group.
type GuardAdmitCall struct {
	LeadID int64
	// ProbeOwner names this call if it becomes the half-open probe.
	ProbeOwner string
	// Horizon is how far ahead of now the bucket's theoretical arrival
	// time may run for this call: burst*Interval plus the longest wait
	// its caller accepts.
	Horizon time.Duration
}

// CeilingInFlightWait is how long a call refused at the ceiling waits when
// only calls in flight fill it (GuardAdmitRow.CeilingInFlight): about a
// call's time, after which they have settled (a miss refunded) and the
// ceiling gives a verdict. Here, not in internal/guard, so that status and
// why can say so without the email tick importing the guard.
const CeilingInFlightWait = time.Minute

// GuardAdmitRow is the admit statement's answer for one call. Breaker is
// "closed", "probe" (this call claimed the half-open probe) or "open".
type GuardAdmitRow struct {
	Breaker    string
	OpenUntil  *time.Time
	ProbeUntil *time.Time
	// Reason is what opened the breaker (an error kind or an operator's
	// words); RetryAfter the provider's Retry-After behind its window.
	Reason       *string
	RetryAfter   *time.Duration
	UnderCeiling *bool
	// CeilingInFlight: refused at the ceiling only because of calls still
	// in flight; a miss among them is refunded when it settles.
	CeilingInFlight bool
	// TAT is, for an admitted call, its rate slot; for a refused one, the
	// bucket's theoretical arrival time.
	TAT       *time.Time
	Granted   *bool
	CallID    *int64
	NextMonth time.Time
	Now       time.Time
}

// GuardAdmit admits a group of calls as if one after another, in order, in
// one statement (breaker, bucket, ceiling, ledger), and returns one row per
// call. The rows it locks are created first when missing.
func GuardAdmit(ctx context.Context, db DBTX, p GuardAdmitParams, calls []GuardAdmitCall) ([]GuardAdmitRow, error) {
	a := guardAdmitParams{WorkspaceID: p.WorkspaceID, Provider: p.Provider, LeadIDs: make([]int64, len(calls)), TickID: p.TickID,
		ProbeOwners: make([]string, len(calls)), ProbeLease: p.ProbeLease, BucketKey: p.BucketKey, Interval: p.Interval,
		Horizons: make([]time.Duration, len(calls)), CostUSD: p.CostUSD, Tolerance: p.Tolerance, Ceiling: !faults.On(faults.Spend)}
	for i, c := range calls {
		a.LeadIDs[i], a.ProbeOwners[i], a.Horizons[i] = c.LeadID, c.ProbeOwner, c.Horizon
	}
	for attempt := 0; ; attempt++ {
		rows, missing, err := guardAdmit(ctx, db, a)
		if err != nil || !missing {
			return rows, err
		}
		if attempt > 0 {
			return nil, fmt.Errorf("admit %s call: workspace %d does not exist", p.Provider, p.WorkspaceID)
		}
		if err := sqlcdb.New(db).GuardAdmitRows(ctx, sqlcdb.GuardAdmitRowsParams{
			WorkspaceID: p.WorkspaceID, Spend: p.CostUSD > 0, BucketKey: p.BucketKey,
		}); err != nil {
			return nil, fmt.Errorf("admit %s call for workspace %d: %w", p.Provider, p.WorkspaceID, err)
		}
	}
}

//go:embed queries/byhand/guard_admit.sql
var guardAdmitSQL string

// guardAdmitParams are guard_admit.sql's parameters: GuardAdmitParams with
// one array element per call for LeadIDs, ProbeOwners and Horizons.
type guardAdmitParams struct {
	WorkspaceID int64           `db:"workspace_id"`
	Provider    string          `db:"provider"`
	LeadIDs     []int64         `db:"lead_ids"`
	TickID      string          `db:"tick_id"`
	ProbeOwners []string        `db:"probe_owners"`
	ProbeLease  time.Duration   `db:"probe_lease"`
	BucketKey   string          `db:"bucket_key"`
	Interval    time.Duration   `db:"interval"`
	Horizons    []time.Duration `db:"horizons"`
	CostUSD     float64         `db:"cost_usd"`
	Tolerance   time.Duration   `db:"tolerance"`
	// Ceiling: the workspace's ceiling holds (the harness's fault switch
	// Spend turns it off).
	Ceiling bool `db:"ceiling"`
}

var guardAdmitStmt = byName[guardAdmitParams](guardAdmitSQL)

func guardAdmit(ctx context.Context, db DBTX, p guardAdmitParams) ([]GuardAdmitRow, bool, error) {
	leads := p.LeadIDs
	rs, err := db.Query(ctx, guardAdmitStmt.sql, guardAdmitStmt.args(p)...)
	if err != nil {
		return nil, false, fmt.Errorf("admit %s calls for workspace %d: %w", p.Provider, p.WorkspaceID, err)
	}
	defer rs.Close()
	out := make([]GuardAdmitRow, 0, len(leads))
	missing := false
	for rs.Next() {
		var r GuardAdmitRow
		var next *time.Time
		var durable string
		if err := rs.Scan(&r.Breaker, &r.OpenUntil, &r.ProbeUntil, &r.Reason, &r.RetryAfter, &r.UnderCeiling,
			&r.TAT, &r.Granted, &r.CallID, &next, &r.Now, &missing, &durable, &r.CeilingInFlight); err != nil {
			return nil, false, fmt.Errorf("admit %s calls for workspace %d: %w", p.Provider, p.WorkspaceID, err)
		}
		if next != nil {
			r.NextMonth = *next
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, false, fmt.Errorf("admit %s calls for workspace %d: %w", p.Provider, p.WorkspaceID, err)
	}
	if len(out) != len(leads) {
		return nil, false, errors.New("admit: the statement answered a different number of calls")
	}
	if !missing && (out[0].UnderCeiling == nil || out[0].NextMonth.IsZero()) {
		return nil, false, fmt.Errorf("admit %s call: workspace %d does not exist", p.Provider, p.WorkspaceID)
	}
	return out, missing, nil
}

// GuardSettleCall is how one admitted call ended, for the ledger.
type GuardSettleCall struct {
	// CallID is its ledger row; State "settled" or "refunded"; Outcome the
	// result's class (found, not_found, an error kind, skipped, ...).
	CallID  int64
	State   string
	Outcome string
	// Clean: the provider answered properly, ending a failure streak.
	Clean bool
	// LeadID and Found: a billed find, kept with its lead.
	LeadID int64
	Found  string
}

//go:embed queries/byhand/guard_settle.sql
var guardSettleSQL string

// guardSettleParams are guard_settle.sql's parameters: an element per call
// in CallIDs, States and Outcomes.
type guardSettleParams struct {
	CallIDs     []int64  `db:"call_ids"`
	States      []string `db:"states"`
	Outcomes    []string `db:"outcomes"`
	Clean       bool     `db:"clean"` // a clean answer among them: clear the failure streak
	WorkspaceID int64    `db:"workspace_id"`
	Provider    string   `db:"provider"`
	// Reserved is the state only whose rows change, 'reserved', sent as a
	// parameter: the settle's generic plan then cannot read the group's
	// rows through a partial index of the reserved calls (migrations
	// 00018, 00021), every entry of which it would read per group (the
	// calls in flight, and the settled ones vacuum has not yet removed);
	// it reaches them by key.
	Reserved string `db:"reserved"`
}

var guardSettleStmt = byName[guardSettleParams](guardSettleSQL)

//go:embed queries/byhand/guard_keep_found.sql
var guardKeepFoundSQL string

// guardKeepFoundParams are guard_keep_found.sql's parameters: each lead
// and the address found for it, at the same index, and the finder.
type guardKeepFoundParams struct {
	LeadIDs  []int64  `db:"lead_ids"`
	Emails   []string `db:"emails"`
	Provider string   `db:"provider"`
}

var guardKeepFoundStmt = byName[guardKeepFoundParams](guardKeepFoundSQL)

// GuardSettle settles or refunds a group of one workspace and provider's
// ledger rows in one statement: refunds go back to the spend, a clean
// answer clears the breaker's failure streak; billed finds are kept with
// their leads by a second statement in the same batch and transaction,
// sent only when there are some (lead_enrichment is not touched
// otherwise). The transaction commits durably whatever the server's
// synchronous_commit (guard_settle sets it): a settle lost in a crash
// would lose the find it paid for (issue 24).
//
// It runs by key (planByKey): the ledger grows a row per call, and a plan
// cached while it was small (a young install's first ticks) would scan all
// of it for every group.
func GuardSettle(ctx context.Context, db Batcher, workspaceID int64, provider string, calls []GuardSettleCall) error {
	ids, states, outcomes := make([]int64, len(calls)), make([]string, len(calls)), make([]string, len(calls))
	var keepLeads []int64
	var keepEmails []string
	clean := false
	for i, c := range calls {
		ids[i], states[i], outcomes[i] = c.CallID, c.State, c.Outcome
		clean = clean || c.Clean
		if c.Found != "" && c.LeadID != 0 {
			keepLeads, keepEmails = append(keepLeads, c.LeadID), append(keepEmails, c.Found)
		}
	}
	stmts := []*pgx.QueuedQuery{{SQL: guardSettleStmt.sql, Arguments: guardSettleStmt.args(guardSettleParams{CallIDs: ids, States: states, Outcomes: outcomes, Clean: clean, WorkspaceID: workspaceID, Provider: provider, Reserved: "reserved"})}}
	if len(keepLeads) > 0 {
		stmts = append(stmts, &pgx.QueuedQuery{SQL: guardKeepFoundStmt.sql, Arguments: guardKeepFoundStmt.args(guardKeepFoundParams{LeadIDs: keepLeads, Emails: keepEmails, Provider: provider})})
	}
	if err := planByKey.exec(ctx, db, stmts...); err != nil {
		return fmt.Errorf("settle %d %s calls of workspace %d: %w", len(calls), provider, workspaceID, err)
	}
	return nil
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
