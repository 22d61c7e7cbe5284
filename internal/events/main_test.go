package events_test

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/enrich/provider/providerspec"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// The guard writes the events these tests deliver; it runs without buckets
// or prices so only the breaker speaks.
var unlimited = guard.Config{Providers: map[string]providerspec.Limits{"findymail": {}, "hunter": {}}}

// newWorkspace creates a workspace and returns its id.
func newWorkspace(t testing.TB, db store.DBTX, name string) int64 {
	t.Helper()
	var id int64
	if err := db.QueryRow(context.Background(), "INSERT INTO workspaces (name) VALUES ($1) RETURNING id", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// newLeads adds n leads to workspace ws.
func newLeads(t testing.TB, db store.DBTX, ws int64, n int) {
	t.Helper()
	if _, err := db.Exec(context.Background(), `
		INSERT INTO leads (workspace_id, first_name, last_name, company_domain)
		SELECT $1, 'Lead', 'N' || i, 'example' || i || '.test' FROM generate_series(1, $2) i`, ws, n); err != nil {
		t.Fatal(err)
	}
}

func call(ws, lead int64, provider string) enrich.Call {
	return enrich.Call{TickID: "tick-test", WorkspaceID: ws, Provider: provider, LeadID: lead}
}

func quotaErr() enrich.CallResult {
	return enrich.CallResult{Outcome: enrich.CallFailed, Err: &enrich.ProviderError{Provider: "findymail", Kind: enrich.KindQuota, Status: 402}}
}

func admit(t *testing.T, g *guard.Guard, c enrich.Call) enrich.Admission {
	t.Helper()
	a, err := g.Admit(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func settle(t *testing.T, g *guard.Guard, a enrich.Admission, res enrich.CallResult) {
	t.Helper()
	if err := g.Settle(context.Background(), a, res); err != nil {
		t.Fatal(err)
	}
}
