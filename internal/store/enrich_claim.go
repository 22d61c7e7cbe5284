package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// EnrichClaim says what one claim round takes.
type EnrichClaim struct {
	TickID string
	Batch  int
	Lease  time.Duration
	// WorkspaceID limits the claim to one workspace; 0 claims from all.
	WorkspaceID int64
	// TickStarted is the tick's start (database time): rows updated since
	// are not claimed again by the same tick.
	TickStarted time.Time
	// After is the latest due time of the tick's previous batch (zero for
	// its first): the claim reads its index from there, not through the
	// entries claimed rows left dead at its head.
	After time.Time
}

// ClaimedLead is a lead a tick now holds, with the lead fields a provider
// needs.
type ClaimedLead struct {
	LeadID      int64
	WorkspaceID int64
	// Attempts counts this claim.
	Attempts int
	// PrevStatus and PrevDue are the row's state before the claim, so an
	// unstarted lead can be released exactly as it was.
	PrevStatus lead.Status
	PrevDue    time.Time
	FirstName  string
	LastName   string
	Company    string
	Domain     string
	// Email is "" unless the lead got an address since it was queued.
	Email string
	// FoundEmail is an address FoundBy found (and billed) that awaits
	// verification; "" when none. MissedBy are the finders that already
	// answered without an address. Neither is asked again.
	FoundEmail, FoundBy string
	MissedBy            []string
	// DoubtedBy are the finders whose answer for the lead was lost (a call
	// admitted, maybe billed, never settled): not asked again either,
	// until RINDA_IN_DOUBT_RETRY_AFTER past DoubtedAt (when the list last
	// grew; zero: never), or `requeue --refind`.
	DoubtedBy []string
	DoubtedAt time.Time
}

//go:embed queries/byhand/enrich_claim.sql
var enrichClaimSQL string

// enrichClaimParams are enrich_claim.sql's parameters (its batch is a
// literal: withBatch).
type enrichClaimParams struct {
	LeaseSeconds float64            `db:"lease_seconds"`
	TickID       string             `db:"tick_id"`
	WorkspaceID  *int64             `db:"workspace_id"` // nil claims from every workspace
	TickStarted  time.Time          `db:"tick_started"`
	After        pgtype.Timestamptz `db:"after"`
}

var enrichClaimStmt = byName[enrichClaimParams](enrichClaimSQL)

// ClaimEnrichment claims due leads in one statement (FOR UPDATE SKIP
// LOCKED), so concurrent ticks never take the same lead.
func ClaimEnrichment(ctx context.Context, db Batcher, c EnrichClaim) ([]ClaimedLead, error) {
	if c.Batch < 1 {
		return nil, fmt.Errorf("claiming leads: batch %d: use 1 or more", c.Batch)
	}
	after := pgtype.Timestamptz{Time: c.After, Valid: true}
	if c.After.IsZero() {
		after.InfinityModifier = pgtype.NegativeInfinity
	}
	var run DBTX = db
	p := enrichClaimParams{LeaseSeconds: c.Lease.Seconds(), TickID: c.TickID, TickStarted: c.TickStarted, After: after}
	if c.WorkspaceID != 0 {
		// One workspace's claim is planned for that workspace every time:
		// a generic plan cannot know a small workspace behind a big one's
		// backlog and walks the whole claim index (62 ms instead of 1 ms
		// for 50 due rows behind 200k, EXPLAIN ANALYZE).
		p.WorkspaceID = &c.WorkspaceID
		run = planPerRun.on(db)
	}
	rows, err := run.Query(ctx, withBatch(enrichClaimStmt.sql, c.Batch), enrichClaimStmt.args(p)...)
	if err != nil {
		return nil, fmt.Errorf("claiming leads: %w", err)
	}
	leads, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ClaimedLead, error) {
		var l ClaimedLead
		var doubtedAt pgtype.Timestamptz
		err := r.Scan(&l.LeadID, &l.WorkspaceID, &l.Attempts, &l.PrevStatus, &l.PrevDue,
			&l.FirstName, &l.LastName, &l.Company, &l.Domain, &l.Email, &l.FoundEmail, &l.FoundBy, &l.MissedBy, &l.DoubtedBy, &doubtedAt)
		l.DoubtedAt = doubtedAt.Time
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("claiming leads: %w", err)
	}
	return leads, nil
}

// DoubtEnrichment settles in doubt the calls other ticks admitted for
// leadIDs (just claimed by tickID after their holder's lease ran out) and
// never settled, and adds the finders among them to each lead's
// doubted_by. It returns each lead's doubted_by where it grew, and when
// (database time, the lead's doubted_at). Run it only
// for leads whose previous holder never recorded them (PrevStatus
// in_progress): a tick that recorded a lead settled or gave up its calls.
//
// It is planned on every run (planPerRun): the ledger grows during a
// tick, and its partial index of reserved calls is the way in.
func DoubtEnrichment(ctx context.Context, db Batcher, tickID string, finders []string, leadIDs []int64) (map[int64]Doubt, error) {
	rows, err := sqlcdb.New(planPerRun.on(db)).EnrichDoubt(ctx, sqlcdb.EnrichDoubtParams{TickID: tickID, LeadIds: leadIDs, Finders: finders})
	if err != nil {
		return nil, fmt.Errorf("settling the calls in doubt of %d leads: %w", len(leadIDs), err)
	}
	out := make(map[int64]Doubt, len(rows))
	for _, r := range rows {
		d := Doubt{By: r.DoubtedBy}
		if r.DoubtedAt != nil {
			d.At = *r.DoubtedAt
		}
		out[r.LeadID] = d
	}
	return out, nil
}

// Doubt is a lead's finders in doubt and when their list last grew.
type Doubt struct {
	By []string
	At time.Time
}
