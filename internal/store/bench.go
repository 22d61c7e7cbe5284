package store

import (
	"context"
	"fmt"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// The benchmarks' seeds (`rindactl bench`, make bench): rows written in
// one statement each, server-side, so seeding costs little beside what is
// measured.

// BenchBackendPID is the server process serving this connection: its
// parent is the postmaster whose CPU time the benchmark reads.
func BenchBackendPID(ctx context.Context, db DBTX) (int, error) {
	pid, err := sqlcdb.New(db).BenchBackendPid(ctx)
	return int(pid), err
}

// BenchSeedDueLeads adds workspace bench with n leads spread over 1,000
// companies, each queued for enrichment and due, in id order.
func BenchSeedDueLeads(ctx context.Context, db DBTX, n int) error {
	q := sqlcdb.New(db)
	ws, err := q.BenchWorkspace(ctx)
	if err != nil {
		return fmt.Errorf("loading leads: %w", err)
	}
	if err := q.BenchLeadsDue(ctx, sqlcdb.BenchLeadsDueParams{WorkspaceID: ws, N: int32(n)}); err != nil {
		return fmt.Errorf("loading leads: %w", err)
	}
	if err := q.BenchEnrichmentDue(ctx); err != nil {
		return fmt.Errorf("loading leads: %w", err)
	}
	return nil
}

// BenchSeedLeadsWithEmail adds n leads with an address to workspace bench.
func BenchSeedLeadsWithEmail(ctx context.Context, db DBTX, n int) error {
	return sqlcdb.New(db).BenchLeadsWithEmail(ctx, int32(n))
}

// BenchStepsDue makes every enrolled step due an hour ago.
func BenchStepsDue(ctx context.Context, db DBTX) error {
	return sqlcdb.New(db).BenchStepsDue(ctx)
}
