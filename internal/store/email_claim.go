package store

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/faults"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// ClaimedEnrollment is a due enrollment leased to one tick, with what it
// takes to send its step. Each field is scanned by name from the column
// of email_claim.sql's RETURNING its db tag names.
type ClaimedEnrollment struct {
	ID          int64     `db:"id"`
	CampaignID  int64     `db:"campaign_id"`
	WorkspaceID int64     `db:"workspace_id"`
	LeadID      int64     `db:"lead_id"`
	MailboxID   int64     `db:"mailbox_id"`
	Step        int       `db:"current_step"` // 1-based, the step to send
	Attempts    int       `db:"attempts"`
	DueAt       time.Time `db:"due_at"`

	FirstName string `db:"first_name"`
	LastName  string `db:"last_name"`
	Company   string `db:"company"`
	Domain    string `db:"company_domain"`
	Email     string `db:"email"`
	Timezone  string `db:"timezone"`

	// Thread holds the Message-IDs of the steps already sent, in order.
	Thread []string `db:"thread"`
	// StepSend is the status of a sends row already present for this step
	// ("sending" after a crash), or empty.
	StepSend enrollment.SendStatus `db:"step_send"`
	// Suppressed is the suppression reason of the lead's address, if any.
	Suppressed string `db:"suppressed"`
	// Holder is the enrollment holding the lead's address in the campaign
	// (campaign_recipients), 0 for none.
	Holder int64 `db:"holder"`
}

// EmailClaim is what one claim took.
type EmailClaim struct {
	Rows []ClaimedEnrollment
	// Contended: another transaction held some capped or gapped mailboxes,
	// which this claim therefore left out; trying again shortly may serve
	// them.
	Contended bool
}

// Beginner starts a transaction: a pool, or a transaction (a savepoint).
type Beginner interface {
	DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
}

//go:embed queries/byhand/email_claim.sql
var emailClaimSQL string

// servedByMailbox says whether a claim that may serve served of the active
// mailboxes reads their rows by mailbox (planByMailbox) rather than walk
// the claim index in due order. The planner costs the walk as if the other
// mailboxes' due rows were spread evenly; but rows of a paused or full
// mailbox stay due and gather at the head of the index, where every claim
// would walk them. Where most mailboxes may be served the walk reads about
// a row per row claimed, where reading by mailbox would read every due row
// of the backlog, each claim: what made 16 email processes slower than 8
// (issue 30). At three quarters, the walk's worst case (the other
// quarter's rows, all ahead) stays below reading the served ones' rows.
func servedByMailbox(served, active int) bool {
	return 4*served < 3*active
}

// claimParts are the parts of the mailboxes a claim serves in turn, as
// the own argument of email_claim_lock.sql and email_claim_room.sql: with
// other email ticks claiming, this tick's share first (shareMask), then
// the rest. Each email tick claims its share first, so each mailbox's
// messages go through one tick's connection rather than one per tick
// process (issue 30: 1.4 messages per connection at 16 processes over
// 1,000 mailboxes) and concurrent claims lock disjoint mailboxes; it
// serves the rest only when its share cannot fill the batch, so no
// mailbox waits for a tick that is gone.
func claimParts(others int) []bool {
	if others == 0 {
		return []bool{true}
	}
	return []bool{true, false}
}

// emailClaimParams are email_claim.sql's parameters.
type emailClaimParams struct {
	Batch  int           `db:"batch"`
	Lease  time.Duration `db:"lease"`
	TickID string        `db:"tick_id"`
	// Locked are the mailboxes whose cap or gap this transaction holds;
	// Served those the claim may serve, with the room of each.
	Locked []int64 `db:"locked"`
	Served []int64 `db:"served"`
	Rooms  []int64 `db:"rooms"`
	// StoppedFollowUps is the harness's fault switch Stops: false.
	StoppedFollowUps bool `db:"stopped_follow_ups"`
}

var emailClaimStmt = byName[emailClaimParams](emailClaimSQL)

// EmailClaimRequest is what a tick asks of one claim: up to Batch due
// enrollments leased to TickID for Lease, none of them on the Busy
// mailboxes (still sending an earlier batch of this tick).
type EmailClaimRequest struct {
	Batch  int
	Lease  time.Duration
	TickID string
	Busy   []int64
}

// ClaimEnrollments claims what r asks for. Email is the lead's address
// normalised (trimmed, lower case).
//
// One transaction: it reads which other email ticks claim now
// (email_claim_share.sql) and so this tick's share, then serves the parts of
// the mailboxes in turn (claimParts) until the batch is full, each with
// three statements: the first locks the part's mailboxes whose cap or gap
// the claim must respect, the second (a new snapshot, so it sees every
// claim committed on them before the locks) counts their room, the third
// claims. No cap is exceeded whatever the number of claims at once.
func ClaimEnrollments(ctx context.Context, db Beginner, r EmailClaimRequest) (EmailClaim, error) {
	batch, tickID, busy := r.Batch, r.TickID, r.Busy
	if busy == nil {
		busy = []int64{}
	}
	var claim EmailClaim
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		q := sqlcdb.New(tx)
		others, err := q.EmailClaimShare(ctx, tickID)
		if err != nil {
			return err
		}
		share := shareMask(tickID, others)
		for _, own := range claimParts(len(others)) {
			if len(claim.Rows) >= batch {
				break
			}
			lock, err := q.EmailClaimLock(ctx, sqlcdb.EmailClaimLockParams{Busy: busy, Share: share, Own: own})
			if err != nil {
				return err
			}
			contended := int(lock.Eligible) > len(lock.Locked)
			claim.Contended = claim.Contended || contended
			room, err := q.EmailClaimRoom(ctx, sqlcdb.EmailClaimRoomParams{Busy: busy, Locked: lock.Locked,
				Share: share, Own: own, TickID: tickID})
			if err != nil {
				return err
			}
			if faults.On(faults.Cap) {
				room.Rooms = slices.Repeat([]int64{math.MaxInt32}, len(room.Rooms))
			}
			// Planned per run: its plan must fit the served mailboxes (see
			// servedByMailbox), and its RETURNING reads sends and
			// campaign_recipients, which grow a row per message during a
			// tick; a plan cached while they were small keeps a
			// sequential scan per claimed row as they grow. Planning
			// costs about 6 µs per claimed row, a few percent of a
			// message's database work.
			rule := planPerRunByKey
			if servedByMailbox(len(room.Ids), int(room.Active)) {
				rule = planByMailbox
			}
			rows, err := rule.on(tx).Query(ctx, emailClaimStmt.sql, emailClaimStmt.args(emailClaimParams{Batch: batch - len(claim.Rows), Lease: r.Lease, TickID: tickID,
				Locked: lock.Locked, Served: room.Ids, Rooms: room.Rooms, StoppedFollowUps: faults.On(faults.Stops)})...)
			if err != nil {
				return err
			}
			// By name: a column and a field that disagree fail every
			// claim, rather than fill one field with another's value.
			// No dearer than a positional scan (measured: fewer
			// allocations per row, the NULLs coalesced in the SQL).
			got, err := pgx.CollectRows(rows, pgx.RowToStructByName[ClaimedEnrollment])
			if err != nil {
				return err
			}
			claim.Rows = append(claim.Rows, got...)
			if own && contended {
				// Another claim holds some of this tick's share (one
				// serving the rest): try the share again shortly rather
				// than lock the rest, where the others' claims would
				// then find their own shares held in turn.
				break
			}
		}
		return nil
	})
	if err != nil {
		return EmailClaim{}, fmt.Errorf("claim enrollments: %w", err)
	}
	return claim, nil
}
