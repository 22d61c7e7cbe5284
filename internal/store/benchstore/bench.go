package benchstore

import (
	"context"
	"fmt"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/benchstore/benchdb"
)

// The benchmarks' seeds (`rindactl bench`, make bench): rows written in
// one statement each, server-side, so seeding costs little beside what is
// measured.

// BenchBackendPID is the server process serving this connection: its
// parent is the postmaster whose CPU time the benchmark reads.
func BenchBackendPID(ctx context.Context, db store.DBTX) (int, error) {
	pid, err := benchdb.New(db).BenchBackendPid(ctx)
	return int(pid), err
}

// BenchSeedDueLeads adds workspace bench with n leads spread over 1,000
// companies, each queued for enrichment and due, in id order.
func BenchSeedDueLeads(ctx context.Context, db store.DBTX, n int) error {
	q := benchdb.New(db)
	ws, err := q.BenchWorkspace(ctx)
	if err != nil {
		return fmt.Errorf("loading leads: %w", err)
	}
	if err := q.BenchLeadsDue(ctx, benchdb.BenchLeadsDueParams{WorkspaceID: ws, N: int32(n)}); err != nil {
		return fmt.Errorf("loading leads: %w", err)
	}
	if err := q.BenchEnrichmentDue(ctx); err != nil {
		return fmt.Errorf("loading leads: %w", err)
	}
	return nil
}

// BenchSeedLeadsWithEmail adds n leads with an address to workspace bench.
func BenchSeedLeadsWithEmail(ctx context.Context, db store.DBTX, n int) error {
	return benchdb.New(db).BenchLeadsWithEmail(ctx, int32(n))
}

// BenchStepsDue makes every enrolled step due an hour ago.
func BenchStepsDue(ctx context.Context, db store.DBTX) error {
	return benchdb.New(db).BenchStepsDue(ctx)
}

// BenchWorkspace adds workspace bench and returns its id.
func BenchWorkspace(ctx context.Context, db store.DBTX) (int64, error) {
	return benchdb.New(db).BenchWorkspace(ctx)
}

// BenchMailboxIDs are every mailbox's id, in order.
func BenchMailboxIDs(ctx context.Context, db store.DBTX) ([]int64, error) {
	return benchdb.New(db).BenchMailboxIds(ctx)
}

// BenchHistory is a year of history for the history benchmark: Sequences
// leads of the workspace enrolled in the campaign on the mailboxes in turn
// with their sends, Calls ledger rows, Events and TickRuns.
type BenchHistory struct {
	WorkspaceID, CampaignID            int64
	MailboxIDs                         []int64
	Sequences, Calls, Events, TickRuns int
}

// BenchSeedHistory writes h in time order, one statement per table.
func BenchSeedHistory(ctx context.Context, db store.DBTX, h BenchHistory) error {
	q := benchdb.New(db)
	for _, st := range []struct {
		what string
		run  func() error
	}{
		{"sequences", func() error {
			return q.BenchHistorySequences(ctx, benchdb.BenchHistorySequencesParams{
				WorkspaceID: h.WorkspaceID, CampaignID: h.CampaignID, N: int32(h.Sequences), MailboxIds: h.MailboxIDs})
		}},
		{"sends", func() error { return q.BenchHistorySends(ctx, h.CampaignID) }},
		{"ledger", func() error {
			return q.BenchHistoryLedger(ctx, benchdb.BenchHistoryLedgerParams{WorkspaceID: h.WorkspaceID, N: int32(h.Calls)})
		}},
		{"events", func() error {
			return q.BenchHistoryEvents(ctx, benchdb.BenchHistoryEventsParams{WorkspaceID: h.WorkspaceID, N: int32(h.Events)})
		}},
		{"tick runs", func() error { return q.BenchHistoryTickRuns(ctx, int32(h.TickRuns)) }},
	} {
		if err := st.run(); err != nil {
			return fmt.Errorf("seeding the history's %s: %w", st.what, err)
		}
	}
	return nil
}

// BenchSeedRoundSteps adds n leads with an address (external ids prefixed
// tag) enrolled in the campaign on the mailboxes in turn, due an hour ago:
// one measured round of the email drain.
func BenchSeedRoundSteps(ctx context.Context, db store.DBTX, workspaceID, campaignID int64, mailboxIDs []int64, n int, tag string) error {
	return benchdb.New(db).BenchRoundSteps(ctx, benchdb.BenchRoundStepsParams{
		WorkspaceID: workspaceID, CampaignID: campaignID, N: int32(n), Tag: tag, MailboxIds: mailboxIDs})
}

// BenchSeedRoundLeads adds n leads without an address (external ids
// prefixed tag), due an hour ago: one measured round of the enrichment
// drain.
func BenchSeedRoundLeads(ctx context.Context, db store.DBTX, workspaceID int64, n int, tag string) error {
	return benchdb.New(db).BenchRoundLeads(ctx, benchdb.BenchRoundLeadsParams{WorkspaceID: workspaceID, N: int32(n), Tag: tag})
}

// BenchSent counts the steps recorded sent, and those whose delivery is
// unknown.
func BenchSent(ctx context.Context, db store.DBTX) (sent, unknown int64, err error) {
	c, err := benchdb.New(db).BenchSentCount(ctx)
	return c.Sent, c.Unknown, err
}

// BenchEnriched counts the leads whose enrichment ended (found or not),
// and the ledger's calls.
func BenchEnriched(ctx context.Context, db store.DBTX) (done, calls int64, err error) {
	c, err := benchdb.New(db).BenchEnrichedCount(ctx)
	return c.Done, c.Calls, err
}

// BenchTickRuns counts the tick_runs rows.
func BenchTickRuns(ctx context.Context, db store.DBTX) (int64, error) {
	return benchdb.New(db).BenchTickCount(ctx)
}

// BenchWait is how many of the database's other active backends wait on
// one event (Type "CPU": none, running).
type BenchWait struct {
	Type, Event string
	Backends    int64
}

// BenchWaits samples what the database's other active client backends
// wait for.
func BenchWaits(ctx context.Context, db store.DBTX) ([]BenchWait, error) {
	rows, err := benchdb.New(db).BenchWaitSample(ctx)
	return store.ConvertRows(rows, err, "sampling waits", func(r benchdb.BenchWaitSampleRow) BenchWait {
		return BenchWait{Type: r.WaitType, Event: r.WaitEvent, Backends: r.Backends}
	})
}

// BenchSeedStormLeads adds workspace storm with n leads spread over 1,000
// companies, each queued for enrichment and due, in id order: the
// enrichment storm's backlog.
func BenchSeedStormLeads(ctx context.Context, db store.DBTX, n int) error {
	q := benchdb.New(db)
	ws, err := q.BenchStormWorkspace(ctx)
	if err == nil {
		err = q.BenchStormLeads(ctx, benchdb.BenchStormLeadsParams{WorkspaceID: ws, N: int32(n)})
	}
	return err
}

// BenchLeadsLeft counts the leads an enrich tick could still claim.
func BenchLeadsLeft(ctx context.Context, db store.DBTX) (int64, error) {
	return benchdb.New(db).BenchLeadsLeft(ctx)
}

// ClusterStats are the counters a run could leave higher for the runs
// after it, outside its own scratch schema (BenchClusterStats).
type ClusterStats struct {
	Checkpoints       int64 `json:"checkpoints"`
	WALBytes          int64 `json:"wal_bytes"`
	CatalogBytes      int64 `json:"catalog_bytes"`
	CatalogDeadTuples int64 `json:"catalog_dead_tuples"`
	AutovacuumRuns    int64 `json:"autovacuum_runs"`
}

// Since is what was added from before to s (negative where it fell:
// autovacuum removes dead tuples).
func (s ClusterStats) Since(before ClusterStats) ClusterStats {
	return ClusterStats{
		Checkpoints:       s.Checkpoints - before.Checkpoints,
		WALBytes:          s.WALBytes - before.WALBytes,
		CatalogBytes:      s.CatalogBytes - before.CatalogBytes,
		CatalogDeadTuples: s.CatalogDeadTuples - before.CatalogDeadTuples,
		AutovacuumRuns:    s.AutovacuumRuns - before.AutovacuumRuns,
	}
}

// BenchClusterStats reads the counters now.
func BenchClusterStats(ctx context.Context, db store.DBTX) (ClusterStats, error) {
	r, err := benchdb.New(db).BenchClusterStats(ctx)
	if err != nil {
		return ClusterStats{}, fmt.Errorf("reading the cluster's counters: %w", err)
	}
	return ClusterStats{Checkpoints: r.Checkpoints, WALBytes: r.WalBytes, CatalogBytes: r.CatalogBytes,
		CatalogDeadTuples: r.CatalogDeadTuples, AutovacuumRuns: r.AutovacuumRuns}, nil
}
