package store

import (
	"context"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// Exported for the external tests of this package only: the hand-run
// statements tests EXPLAIN.
var (
	EmailClaimSQL      = emailClaimSQL
	EmailSettleSQL     = emailSettleSQL
	EmailSendsBeginSQL = emailSendsBeginSQL
)

// EmailClaimRoom runs the email claim's second statement
// (email_claim_room.sql): the mailboxes the claim may serve, and their room.
func EmailClaimRoom(ctx context.Context, db DBTX, busy, locked []int64) (served, rooms []int64, err error) {
	r, err := sqlcdb.New(db).EmailClaimRoom(ctx, sqlcdb.EmailClaimRoomParams{Busy: busy, Locked: locked, Ticks: 1, Own: true})
	return r.Ids, r.Rooms, err
}

// EnrichClaimSQL is the enrichment claim with batch written in.
func EnrichClaimSQL(batch int) string { return withBatch(enrichClaimSQL, batch) }

// WithBatch writes batch into a claim statement.
var WithBatch = withBatch
