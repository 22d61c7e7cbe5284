package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// ClaimedEnrollment is a due enrollment leased to one tick, with what it
// takes to send its step.
type ClaimedEnrollment struct {
	ID          int64
	CampaignID  int64
	WorkspaceID int64
	LeadID      int64
	MailboxID   int64
	Step        int // 1-based, the step to send
	Attempts    int
	DueAt       time.Time

	FirstName, LastName, Company, Domain, Email, Timezone string

	// Thread holds the Message-IDs of the steps already sent, in order.
	Thread []string
	// StepSend is the status of a sends row already present for this step
	// ("sending" after a crash), or empty.
	StepSend enrollment.SendStatus
	// Suppressed is the suppression reason of the lead's address, if any.
	Suppressed string
	// Holder is the enrollment holding the lead's address in the campaign
	// (campaign_recipients), 0 for none.
	Holder int64
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

// emailClaimParams are email_claim.sql's parameters.
type emailClaimParams struct {
	Batch  int
	Lease  time.Duration
	TickID string
	// Busy are mailboxes still sending an earlier batch of this tick;
	// Locked those whose cap or gap this transaction holds.
	Busy   []int64
	Locked []int64
}

// ClaimEnrollments leases up to batch due enrollments to tickID for lease,
// none of them on the busy mailboxes (still sending an earlier batch of
// this tick). Email is the lead's address normalised (trimmed, lower case).
//
// One transaction of two statements: the first locks the mailboxes whose
// cap or gap the claim must respect, the second (a new snapshot, so it sees
// every claim committed on them before the locks) counts their room and
// claims. No cap is exceeded whatever the number of claims at once.
func ClaimEnrollments(ctx context.Context, db Beginner, batch int, lease time.Duration, tickID string, busy ...int64) (EmailClaim, error) {
	if busy == nil {
		busy = []int64{}
	}
	var claim EmailClaim
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		lock, err := sqlcdb.New(tx).EmailClaimLock(ctx, busy)
		if err != nil {
			return err
		}
		claim.Contended = int(lock.Eligible) > len(lock.Locked)
		// Planned per run: its RETURNING reads sends and
		// campaign_recipients, which grow a row per message during a tick;
		// a plan cached while they were small keeps a sequential scan per
		// claimed row as they grow. Planning costs about 6 µs per claimed
		// row, a few percent of a message's database work.
		rows, err := planPerRun.on(tx).Query(ctx, emailClaimSQL, params(emailClaimParams{Batch: batch, Lease: lease, TickID: tickID, Busy: busy, Locked: lock.Locked})...)
		if err != nil {
			return err
		}
		claim.Rows, err = pgx.CollectRows(rows, scanClaimedEnrollment)
		return err
	})
	if err != nil {
		return EmailClaim{}, fmt.Errorf("claim enrollments: %w", err)
	}
	return claim, nil
}

func scanClaimedEnrollment(r pgx.CollectableRow) (ClaimedEnrollment, error) {
	var c ClaimedEnrollment
	var stepSend, suppressed *string
	var holder *int64
	err := r.Scan(&c.ID, &c.CampaignID, &c.WorkspaceID, &c.LeadID, &c.MailboxID, &c.Step, &c.Attempts, &c.DueAt,
		&c.FirstName, &c.LastName, &c.Company, &c.Domain, &c.Email, &c.Timezone,
		&c.Thread, &stepSend, &suppressed, &holder)
	if holder != nil {
		c.Holder = *holder
	}
	if stepSend != nil {
		c.StepSend = enrollment.SendStatus(*stepSend)
	}
	if suppressed != nil {
		c.Suppressed = *suppressed
	}
	return c, err
}
