package store

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/redact"
)

// EnrichOutcome is the new state of one claimed lead.
type EnrichOutcome struct {
	LeadID int64
	// Status is where enrich.decide() moved the claimed (in_progress) lead.
	Status lead.Status
	// DueAt, when set, is the next attempt time; otherwise it is now()+Delay
	// in database time (so hosts' clocks do not matter). For unreachable it
	// is also the negative cache's end.
	DueAt time.Time
	Delay time.Duration
	// Refund gives back the attempt the claim charged: the lead was not
	// worked (released, or every provider blocked).
	Refund bool
	// Provider answered last or blocked; "" keeps the previous value.
	Provider  string
	LastError string
	// Email is the found address ("" for none).
	Email string
	// Held is an address HeldBy found that awaits verification ("" for
	// none); MissedBy the finders that answered without an address.
	// KeepFound leaves what the row already holds of both (a release).
	Held, HeldBy string
	MissedBy     []string
	KeepFound    bool
	// DoubtedBy are the finders in doubt for the lead after this attempt
	// (see ClaimedLead); DoubtNow starts its wait for them now: a call cut
	// with its request out joined them.
	DoubtedBy []string
	DoubtNow  bool
}

//go:embed queries/byhand/enrich_record.sql
var enrichRecordSQL string

// enrichRecordParams are enrich_record.sql's parameters: the tick, then one
// array per EnrichOutcome field, an element per outcome (NULL elements
// where the outcome has no value; MissedBy and DoubtedBy joined with
// commas; Refunds, KeepFound and DoubtNow 1 or 0).
type enrichRecordParams struct {
	TickID    string       `db:"tick_id"`
	LeadIDs   []int64      `db:"lead_ids"`
	Statuses  []string     `db:"statuses"`
	DueAt     []*time.Time `db:"due_at"`
	DelaysMS  []int64      `db:"delays_ms"`
	Refunds   []int32      `db:"refunds"`
	Providers []*string    `db:"providers"`
	Errors    []*string    `db:"errors"`
	Emails    []*string    `db:"emails"`
	Held      []*string    `db:"held"`
	HeldBy    []*string    `db:"held_by"`
	MissedBy  []string     `db:"missed_by"`
	KeepFound []int32      `db:"keep_found"`
	Doubted   []string     `db:"doubted"`
	DoubtNow  []int32      `db:"doubt_now"`
}

var enrichRecordStmt = byName[enrichRecordParams](enrichRecordSQL)

// RecordEnrichment writes a group of outcomes for tickID in one statement
// and returns how many rows it updated; rows whose lease another tick took
// over are left alone and not counted.
func RecordEnrichment(ctx context.Context, db DBTX, tickID string, outs []EnrichOutcome) (int, error) {
	n := len(outs)
	p := enrichRecordParams{
		TickID:    tickID,
		LeadIDs:   make([]int64, n),
		Statuses:  make([]string, n),
		DueAt:     make([]*time.Time, n),
		DelaysMS:  make([]int64, n),
		Refunds:   make([]int32, n),
		Providers: make([]*string, n),
		Errors:    make([]*string, n),
		Emails:    make([]*string, n),
		Held:      make([]*string, n),
		HeldBy:    make([]*string, n),
		MissedBy:  make([]string, n),
		KeepFound: make([]int32, n),
		Doubted:   make([]string, n),
		DoubtNow:  make([]int32, n),
	}
	for i, o := range outs {
		p.LeadIDs[i], p.Statuses[i], p.DelaysMS[i] = o.LeadID, string(o.Status), o.Delay.Milliseconds()
		if !o.DueAt.IsZero() {
			p.DueAt[i] = &o.DueAt
		}
		if o.Refund {
			p.Refunds[i] = 1
		}
		p.Providers[i], p.Errors[i], p.Emails[i] = nullText(o.Provider), nullText(redact.Stored(o.LastError)), nullText(o.Email)
		p.Held[i], p.HeldBy[i], p.MissedBy[i] = nullText(o.Held), nullText(o.HeldBy), strings.Join(o.MissedBy, ",")
		if o.KeepFound {
			p.KeepFound[i] = 1
		}
		p.Doubted[i] = strings.Join(o.DoubtedBy, ",")
		if o.DoubtNow {
			p.DoubtNow[i] = 1
		}
	}
	var updated int
	err := db.QueryRow(ctx, enrichRecordStmt.sql, enrichRecordStmt.args(p)...).Scan(&updated)
	if err != nil {
		return 0, fmt.Errorf("%d outcomes: %w", n, err)
	}
	return updated, nil
}
