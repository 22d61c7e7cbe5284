package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/lead"
)

// OpsRequeueFilter narrows a requeue. Nil fields do not filter.
type OpsRequeueFilter struct {
	WorkspaceID *int64
	// Provider applies to leads only, CampaignID to enrollments only.
	Provider   *string
	CampaignID *int64
	// OlderThan keeps rows untouched (updated_at) for longer than this.
	OlderThan *time.Duration
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
	return collectGroups(db.Query(ctx, query("ops_requeue_leads_count"), status, f.WorkspaceID, f.Provider, f.OlderThan))
}

// OpsRequeueLeadsBatch moves up to limit leads in status matching f back to
// pending, due now. Run it in its own transaction: it holds the row locks
// of one batch until commit.
func OpsRequeueLeadsBatch(ctx context.Context, db DBTX, status lead.Status, f OpsRequeueFilter, limit int) ([]OpsRequeueGroup, error) {
	return collectGroups(db.Query(ctx, query("ops_requeue_leads_batch"), status, f.WorkspaceID, f.Provider, f.OlderThan, limit))
}

// OpsCountRequeueEnrollments counts enrollments in status (failed or
// delivery_unknown) matching f.
func OpsCountRequeueEnrollments(ctx context.Context, db DBTX, status enrollment.Status, f OpsRequeueFilter) ([]OpsRequeueGroup, error) {
	return collectGroups(db.Query(ctx, query("ops_requeue_enrollments_count"), f.WorkspaceID, f.CampaignID, f.OlderThan, status))
}

// OpsRequeueEnrollmentsBatch makes up to limit enrollments in status
// matching f active and due now. Run it in its own transaction.
func OpsRequeueEnrollmentsBatch(ctx context.Context, db DBTX, status enrollment.Status, f OpsRequeueFilter, limit int) ([]OpsRequeueGroup, error) {
	return collectGroups(db.Query(ctx, query("ops_requeue_enrollments_batch"), f.WorkspaceID, f.CampaignID, f.OlderThan, limit, status))
}

func collectGroups(rows pgx.Rows, err error) ([]OpsRequeueGroup, error) {
	if err != nil {
		return nil, fmt.Errorf("requeue: %w", err)
	}
	groups, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OpsRequeueGroup, error) {
		var g OpsRequeueGroup
		return g, r.Scan(&g.Workspace, &g.Key, &g.Count)
	})
	if err != nil {
		return nil, fmt.Errorf("requeue: %w", err)
	}
	return groups, nil
}
