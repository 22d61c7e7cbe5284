package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// MailboxLoad is a campaign mailbox as the sender binder
// (sequence.BindSenders) sees it: how many active enrollments are bound to
// it, and whether it may take more.
type MailboxLoad struct {
	ID      int64
	Address string
	Healthy bool
	Load    int
}

// MailboxLoads lists the campaign's mailboxes with the number of active
// enrollments bound to each.
func MailboxLoads(ctx context.Context, db DBTX, campaignID int64) ([]MailboxLoad, error) {
	rows, err := sqlcdb.New(db).EmailMailboxLoads(ctx, campaignID)
	return convertRows(rows, err, fmt.Sprintf("campaign %d mailbox loads", campaignID), func(r sqlcdb.EmailMailboxLoadsRow) MailboxLoad {
		return MailboxLoad{ID: r.ID, Address: r.Address, Healthy: r.Healthy, Load: int(r.Load)}
	})
}

// EnrollCandidate is a lead that may be enrolled.
type EnrollCandidate struct {
	LeadID   int64
	Timezone string
	// Duplicate: another lead with this address is (or is about to be)
	// enrolled in the campaign; this one must not be.
	Duplicate bool
	// Suppressed: the address is on the workspace's suppression list.
	Suppressed bool
}

// EnrollCandidates lists the workspace's leads not yet in the campaign, by
// lead id; keys (external ids or lower-cased emails) narrow the list, nil
// means every lead.
func EnrollCandidates(ctx context.Context, tx pgx.Tx, workspaceID, campaignID int64, keys []string) ([]EnrollCandidate, error) {
	rows, err := sqlcdb.New(tx).EmailEnrollCandidates(ctx, sqlcdb.EmailEnrollCandidatesParams{WorkspaceID: workspaceID, CampaignID: campaignID, Targets: keys})
	return convertRows(rows, err, "enroll candidates", func(r sqlcdb.EmailEnrollCandidatesRow) EnrollCandidate {
		return EnrollCandidate{LeadID: r.ID, Timezone: r.Timezone, Duplicate: r.Duplicate, Suppressed: r.Suppressed}
	})
}

// NewEnrollment is one enrollment to insert.
type NewEnrollment struct {
	LeadID     int64
	NextSendAt time.Time
	MailboxID  int64
}

// enrollChunk bounds one INSERT's arrays.
const enrollChunk = 5000

//go:embed queries/byhand/email_enroll_insert.sql
var emailEnrollInsertSQL string

// emailEnrollInsertParams are email_enroll_insert.sql's parameters: the
// campaign and its workspace, and an element per enrollment in each array.
type emailEnrollInsertParams struct {
	CampaignID  int64       `db:"campaign_id"`
	WorkspaceID int64       `db:"workspace_id"`
	LeadIDs     []int64     `db:"lead_ids"`
	NextSendAt  []time.Time `db:"next_send_at"`
	MailboxIDs  []int64     `db:"mailbox_ids"`
}

var emailEnrollInsertStmt = byName[emailEnrollInsertParams](emailEnrollInsertSQL)

// InsertEnrollments enrolls leads; already enrolled leads are skipped. It
// returns how many rows were inserted.
func InsertEnrollments(ctx context.Context, tx pgx.Tx, campaignID, workspaceID int64, es []NewEnrollment) (int64, error) {
	var inserted int64
	for start := 0; start < len(es); start += enrollChunk {
		chunk := es[start:min(start+enrollChunk, len(es))]
		p := emailEnrollInsertParams{CampaignID: campaignID, WorkspaceID: workspaceID,
			LeadIDs: make([]int64, len(chunk)), NextSendAt: make([]time.Time, len(chunk)), MailboxIDs: make([]int64, len(chunk))}
		for i, e := range chunk {
			p.LeadIDs[i], p.NextSendAt[i], p.MailboxIDs[i] = e.LeadID, e.NextSendAt, e.MailboxID
		}
		tag, err := tx.Exec(ctx, emailEnrollInsertStmt.sql, emailEnrollInsertStmt.args(p)...)
		if err != nil {
			return inserted, fmt.Errorf("enroll: %w", err)
		}
		inserted += tag.RowsAffected()
	}
	return inserted, nil
}

// RebindCandidate is an unsent step-1 enrollment whose mailbox cannot send.
type RebindCandidate struct {
	EnrollmentID int64
	LeadID       int64
}

// RebindCandidates lists (and locks) the campaign's step-1 enrollments that
// sent nothing and sit on a paused, disabled or removed mailbox. tickID lets
// a tick move rows it holds itself; pass "" otherwise.
func RebindCandidates(ctx context.Context, tx pgx.Tx, campaignID int64, tickID string) ([]RebindCandidate, error) {
	rows, err := sqlcdb.New(tx).EmailRebindCandidates(ctx, sqlcdb.EmailRebindCandidatesParams{CampaignID: campaignID, LockedBy: &tickID})
	return convertRows(rows, err, fmt.Sprintf("campaign %d rebind candidates", campaignID), func(r sqlcdb.EmailRebindCandidatesRow) RebindCandidate {
		return RebindCandidate{EnrollmentID: r.ID, LeadID: r.LeadID}
	})
}

//go:embed queries/byhand/email_enrollments_rebind.sql
var emailEnrollmentsRebindSQL string

// emailEnrollmentsRebindParams are email_enrollments_rebind.sql's
// parameters: each enrollment and its new mailbox, at the same index.
type emailEnrollmentsRebindParams struct {
	EnrollmentIDs []int64 `db:"enrollment_ids"`
	MailboxIDs    []int64 `db:"mailbox_ids"`
}

var emailEnrollmentsRebindStmt = byName[emailEnrollmentsRebindParams](emailEnrollmentsRebindSQL)

// RebindEnrollments stores new mailboxes for enrollments.
func RebindEnrollments(ctx context.Context, tx pgx.Tx, enrollmentIDs, mailboxIDs []int64) error {
	if _, err := tx.Exec(ctx, emailEnrollmentsRebindStmt.sql, emailEnrollmentsRebindStmt.args(emailEnrollmentsRebindParams{EnrollmentIDs: enrollmentIDs, MailboxIDs: mailboxIDs})...); err != nil {
		return fmt.Errorf("rebind enrollments: %w", err)
	}
	return nil
}
