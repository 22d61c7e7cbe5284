package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
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

//go:embed queries/byhand/email_claim.sql
var emailClaimSQL string

// emailClaimParams are email_claim.sql's parameters.
type emailClaimParams struct {
	Batch  int
	Lease  time.Duration
	TickID string
	// Skip are mailboxes busy in this tick.
	Skip []int64
}

// ClaimEnrollments leases up to batch due enrollments to tickID for lease,
// none of them on the skipped mailboxes (busy in this tick). Email is the
// lead's address normalised (trimmed, lower case).
func ClaimEnrollments(ctx context.Context, db Batcher, batch int, lease time.Duration, tickID string, skip ...int64) ([]ClaimedEnrollment, error) {
	if skip == nil {
		skip = []int64{}
	}
	// Planned per run: its RETURNING reads sends and campaign_recipients,
	// which grow a row per message during a tick; a plan cached while they
	// were small keeps a sequential scan per claimed row as they grow.
	// Planning costs about 6 µs per claimed row, a few percent of a
	// message's database work.
	rows, err := planPerRun.on(db).Query(ctx, emailClaimSQL, params(emailClaimParams{batch, lease, tickID, skip})...)
	if err != nil {
		return nil, fmt.Errorf("claim enrollments: %w", err)
	}
	claimed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ClaimedEnrollment, error) {
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
	})
	if err != nil {
		return nil, fmt.Errorf("claim enrollments: %w", err)
	}
	return claimed, nil
}
