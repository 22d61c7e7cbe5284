package store

import (
	"context"
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
}

// RecordEnrichment writes a group of outcomes for tickID in one statement
// and returns how many rows it updated; rows whose lease another tick took
// over are left alone and not counted.
func RecordEnrichment(ctx context.Context, db DBTX, tickID string, outs []EnrichOutcome) (int, error) {
	n := len(outs)
	var (
		ids      = make([]int64, n)
		statuses = make([]string, n)
		dues     = make([]*time.Time, n)
		delays   = make([]int64, n)
		refunds  = make([]int32, n)
		provs    = make([]*string, n)
		errs     = make([]*string, n)
		emails   = make([]*string, n)
		held     = make([]*string, n)
		heldBy   = make([]*string, n)
		missed   = make([]string, n)
		keep     = make([]int32, n)
	)
	for i, o := range outs {
		ids[i], statuses[i], delays[i] = o.LeadID, string(o.Status), o.Delay.Milliseconds()
		if !o.DueAt.IsZero() {
			dues[i] = &o.DueAt
		}
		if o.Refund {
			refunds[i] = 1
		}
		provs[i], errs[i], emails[i] = nullText(o.Provider), nullText(redact.Stored(o.LastError)), nullText(o.Email)
		held[i], heldBy[i], missed[i] = nullText(o.Held), nullText(o.HeldBy), strings.Join(o.MissedBy, ",")
		if o.KeepFound {
			keep[i] = 1
		}
	}
	var updated int
	err := db.QueryRow(ctx, query("enrich_record"), tickID, ids, statuses, dues, delays, refunds, provs, errs, emails,
		held, heldBy, missed, keep).Scan(&updated)
	if err != nil {
		return 0, fmt.Errorf("%d outcomes: %w", n, err)
	}
	return updated, nil
}
