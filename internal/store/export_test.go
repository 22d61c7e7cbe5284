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
	r, err := sqlcdb.New(db).EmailClaimRoom(ctx, sqlcdb.EmailClaimRoomParams{Busy: busy, Locked: locked, Share: shareMask("", nil), Own: true})
	return r.Ids, r.Rooms, err
}

// ShareMask is a tick's share of the mailboxes beside the other ticks
// claiming (email claim); ShareSlots the slots (mailbox id modulo it).
var ShareMask = shareMask

const ShareSlots = shareSlots

// InShare reads mask as the claim's statements do (get_bit): whether the
// mailbox's slot is set.
func InShare(mask []byte, mailboxID int64) bool {
	slot := mailboxID % shareSlots
	return mask[slot/8]&(1<<(slot%8)) != 0
}

// EnrichClaimSQL is the enrichment claim with batch written in.
func EnrichClaimSQL(batch int) string { return withBatch(enrichClaimSQL, batch) }

// WithBatch writes batch into a claim statement.
var WithBatch = withBatch
