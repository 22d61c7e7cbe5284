package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// OpsLead is a lead with its enrichment state, for `why lead`.
type OpsLead struct {
	ID          int64
	WorkspaceID int64
	Workspace   string
	ExternalID  string
	Email       string
	EmailSource string

	// HasEnrichment is false when the lead never needed enrichment.
	HasEnrichment      bool
	Status             lead.Status
	Attempts           int
	NextAttemptAt      *time.Time
	LockedUntil        *time.Time
	LockedBy           string
	NegativeCacheUntil *time.Time
	LastError          string
	Provider           string
	UpdatedAt          *time.Time
	// FoundEmail is an address FoundBy found that awaits verification;
	// MissedBy the finders that answered without one; DoubtedBy those
	// whose answer was lost (maybe billed).
	FoundEmail, FoundBy string
	MissedBy            []string
	DoubtedBy           []string
	// DoubtedAt is when DoubtedBy last grew (nil: never).
	DoubtedAt *time.Time
}

// OpsFindLeads finds leads by id (when ref is a number) or external id,
// within workspaceID when it is not nil. At most 10 rows.
func OpsFindLeads(ctx context.Context, db DBTX, ref string, workspaceID *int64) ([]OpsLead, error) {
	var id *int64
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil {
		id = &n
	}
	rows, err := sqlcdb.New(db).OpsWhyLead(ctx, sqlcdb.OpsWhyLeadParams{ID: id, Ref: ref, WorkspaceID: workspaceID})
	return convertRows(rows, err, fmt.Sprintf("lead %q", ref), func(r sqlcdb.OpsWhyLeadRow) OpsLead {
		return OpsLead{
			ID: r.ID, WorkspaceID: r.WorkspaceID, Workspace: r.Workspace, ExternalID: r.ExternalID,
			Email: r.Email, EmailSource: r.EmailSource, HasEnrichment: r.HasEnrichment,
			Status: lead.Status(r.Status), Attempts: int(r.Attempts), NextAttemptAt: r.NextAttemptAt,
			LockedUntil: r.LockedUntil, LockedBy: r.LockedBy, NegativeCacheUntil: r.NegativeCacheUntil,
			LastError: r.LastError, Provider: r.Provider, UpdatedAt: r.UpdatedAt,
			FoundEmail: r.FoundEmail, FoundBy: r.FoundBy, MissedBy: r.MissedBy, DoubtedBy: r.DoubtedBy,
			DoubtedAt: r.DoubtedAt,
		}
	})
}

// OpsRateLimit is a token bucket whose theoretical arrival time is ahead of
// now: it has been drawn down and refills until TAT.
type OpsRateLimit struct {
	Key string
	TAT time.Time
}

// OpsBusyRateLimits lists the buckets drawn ahead of now that apply to the
// workspace (provider-wide keys and the workspace's own).
func OpsBusyRateLimits(ctx context.Context, db DBTX, now time.Time, workspaceID int64) ([]OpsRateLimit, error) {
	rows, err := sqlcdb.New(db).OpsRateLimits(ctx, sqlcdb.OpsRateLimitsParams{Now: now, WorkspaceID: workspaceID})
	return convertRows(rows, err, "rate limits", func(r sqlcdb.OpsRateLimitsRow) OpsRateLimit {
		return OpsRateLimit{Key: r.Key, TAT: r.Tat}
	})
}

// OpsEnrollment is an enrollment with everything that can hold its next
// step back, for `why enrollment`.
type OpsEnrollment struct {
	ID          int64
	Status      enrollment.Status
	CurrentStep int
	NextSendAt  time.Time
	Attempts    int
	LockedUntil *time.Time
	LockedBy    string
	LastError   string
	Workspace   string

	CampaignID     int64
	Campaign       string
	CampaignStatus string
	WindowTimezone string
	WindowDays     []string
	WindowStart    string
	WindowEnd      string
	Steps          int

	LeadID         int64
	LeadExternalID string
	LeadEmail      string
	LeadTimezone   string

	MailboxID          *int64
	MailboxAddress     string
	MailboxStatus      string
	MailboxCapToday    int // the cap in force today (0: none)
	MailboxPausedUntil *time.Time
	MailboxPauseReason string
	// MailboxGapUntil is when a mailbox with a human gap may send again.
	MailboxGapUntil *time.Time
	MailboxSent24h  int64

	Suppressed string

	LastSendStep   int
	LastSendStatus enrollment.SendStatus
	LastSendError  string
}

// OpsFindEnrollment loads enrollment id as of now; found is false when it
// does not exist.
func OpsFindEnrollment(ctx context.Context, db DBTX, id int64, now time.Time) (e OpsEnrollment, found bool, err error) {
	r, err := sqlcdb.New(db).OpsWhyEnrollment(ctx, sqlcdb.OpsWhyEnrollmentParams{ID: id, Now: now})
	if errors.Is(err, pgx.ErrNoRows) {
		return e, false, nil
	}
	if err != nil {
		return e, false, fmt.Errorf("enrollment %d: %w", id, err)
	}
	return OpsEnrollment{
		ID: r.ID, Status: enrollment.Status(r.Status), CurrentStep: int(r.CurrentStep), NextSendAt: r.NextSendAt,
		Attempts: int(r.Attempts), LockedUntil: r.LockedUntil, LockedBy: r.LockedBy, LastError: r.LastError,
		Workspace: r.Workspace,

		CampaignID: r.CampaignID, Campaign: r.Campaign, CampaignStatus: r.CampaignStatus,
		WindowTimezone: r.WindowTimezone, WindowDays: r.WindowDays, WindowStart: r.WindowStart, WindowEnd: r.WindowEnd,
		Steps: int(r.Steps),

		LeadID: r.LeadID, LeadExternalID: r.LeadExternalID, LeadEmail: r.LeadEmail, LeadTimezone: r.LeadTimezone,

		MailboxID: r.MailboxID, MailboxAddress: r.MailboxAddress, MailboxStatus: r.MailboxStatus,
		MailboxCapToday: int(r.MailboxCapToday), MailboxPausedUntil: r.MailboxPausedUntil,
		MailboxPauseReason: r.MailboxPauseReason, MailboxGapUntil: r.MailboxGapUntil, MailboxSent24h: r.MailboxSent24h,

		Suppressed: r.Suppressed,

		LastSendStep: int(r.LastSendStep), LastSendStatus: enrollment.SendStatus(r.LastSendStatus),
		LastSendError: r.LastSendError,
	}, true, nil
}
