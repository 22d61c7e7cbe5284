package store

import (
	"context"
	"time"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// OpsRequeueFilter narrows a requeue. Nil fields do not filter.
type OpsRequeueFilter struct {
	WorkspaceID *int64
	// Provider applies to leads only, CampaignID to enrollments only.
	Provider   *string
	CampaignID *int64
	// OlderThan keeps rows untouched (updated_at) for longer than this.
	OlderThan *time.Duration
	// Refind (leads) forgets what finders already answered: an address
	// awaiting verification and the finders that found nothing.
	Refind bool
}

// OpsRequeueGroup counts requeued (or matching) rows per workspace and
// provider (leads) or campaign (enrollments).
type OpsRequeueGroup struct {
	Workspace string
	// Key is the provider for leads, the campaign name for enrollments.
	Key   string
	Count int64
}

// OpsCountRequeueLeads counts leads in status matching f.
func OpsCountRequeueLeads(ctx context.Context, db DBTX, status lead.Status, f OpsRequeueFilter) ([]OpsRequeueGroup, error) {
	rows, err := sqlcdb.New(db).OpsRequeueLeadsCount(ctx, sqlcdb.OpsRequeueLeadsCountParams{
		Status: string(status), WorkspaceID: f.WorkspaceID, Provider: f.Provider, OlderThan: f.OlderThan,
	})
	return convertRows(rows, err, "requeue", func(r sqlcdb.OpsRequeueLeadsCountRow) OpsRequeueGroup {
		return OpsRequeueGroup{Workspace: r.Workspace, Key: r.Provider, Count: r.Count}
	})
}

// OpsRequeueLeadsBatch moves up to limit leads in status matching f back to
// pending, due now. Run it in its own transaction: it holds the row locks
// of one batch until commit.
func OpsRequeueLeadsBatch(ctx context.Context, db DBTX, status lead.Status, f OpsRequeueFilter, limit int) ([]OpsRequeueGroup, error) {
	rows, err := sqlcdb.New(db).OpsRequeueLeadsBatch(ctx, sqlcdb.OpsRequeueLeadsBatchParams{
		Status: string(status), WorkspaceID: f.WorkspaceID, Provider: f.Provider, OlderThan: f.OlderThan, Batch: int32(limit),
		Refind: f.Refind,
	})
	return convertRows(rows, err, "requeue", func(r sqlcdb.OpsRequeueLeadsBatchRow) OpsRequeueGroup {
		return OpsRequeueGroup{Workspace: r.Workspace, Key: r.Provider, Count: r.Count}
	})
}

// OpsCountRequeueEnrollments counts enrollments in status (failed or
// delivery_unknown) matching f.
func OpsCountRequeueEnrollments(ctx context.Context, db DBTX, status enrollment.Status, f OpsRequeueFilter) ([]OpsRequeueGroup, error) {
	rows, err := sqlcdb.New(db).OpsRequeueEnrollmentsCount(ctx, sqlcdb.OpsRequeueEnrollmentsCountParams{
		Status: string(status), WorkspaceID: f.WorkspaceID, CampaignID: f.CampaignID, OlderThan: f.OlderThan,
	})
	return convertRows(rows, err, "requeue", func(r sqlcdb.OpsRequeueEnrollmentsCountRow) OpsRequeueGroup {
		return OpsRequeueGroup{Workspace: r.Workspace, Key: r.Campaign, Count: r.Count}
	})
}

// OpsRequeueEnrollmentsBatch makes up to limit enrollments in status
// matching f active and due now. Run it in its own transaction.
func OpsRequeueEnrollmentsBatch(ctx context.Context, db DBTX, status enrollment.Status, f OpsRequeueFilter, limit int) ([]OpsRequeueGroup, error) {
	rows, err := sqlcdb.New(db).OpsRequeueEnrollmentsBatch(ctx, sqlcdb.OpsRequeueEnrollmentsBatchParams{
		Status: string(status), WorkspaceID: f.WorkspaceID, CampaignID: f.CampaignID, OlderThan: f.OlderThan, Batch: int32(limit),
	})
	return convertRows(rows, err, "requeue", func(r sqlcdb.OpsRequeueEnrollmentsBatchRow) OpsRequeueGroup {
		return OpsRequeueGroup{Workspace: r.Workspace, Key: r.Campaign, Count: r.Count}
	})
}
