package guard_test

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// newWorkspace creates a workspace and returns its id.
func newWorkspace(t testing.TB, db store.DBTX, name string) int64 {
	t.Helper()
	var id int64
	if err := db.QueryRow(context.Background(), "INSERT INTO workspaces (name) VALUES ($1) RETURNING id", name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// expireBreaker moves a breaker's end into the past, as time would.
func expireBreaker(t *testing.T, db store.DBTX, ws int64, provider string) {
	t.Helper()
	if _, err := db.Exec(context.Background(),
		"UPDATE breakers SET open_until = now() - interval '1 second' WHERE workspace_id = $1 AND provider = $2", ws, provider); err != nil {
		t.Fatal(err)
	}
}

// eventCount counts outbox events of kind.
func eventCount(t *testing.T, db store.DBTX, kind string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), "SELECT count(*) FROM events WHERE kind = $1", kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// newLeads adds n leads to workspace ws and returns their ids in order.
func newLeads(t testing.TB, db store.DBTX, ws int64, n int) []int64 {
	t.Helper()
	return storetest.Column[int64](t, db, `
		INSERT INTO leads (workspace_id, first_name, last_name, company_domain)
		SELECT $1, 'Lead', 'N' || i, 'example' || i || '.test' FROM generate_series(1, $2) i
		RETURNING id`, ws, n)
}

// newDueLeads adds n leads to workspace ws, due for enrichment since
// before any tick that starts now.
func newDueLeads(t testing.TB, db store.DBTX, ws int64, n int) {
	t.Helper()
	newLeads(t, db, ws, n)
	if _, err := db.Exec(context.Background(), `INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
		SELECT id, workspace_id, now() - interval '1 second', now() - interval '1 second' FROM leads WHERE workspace_id = $1`, ws); err != nil {
		t.Fatal(err)
	}
}
