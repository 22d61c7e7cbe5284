package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The enrichment claim over all workspaces runs as a cached prepared
// statement, so Postgres may switch it to a generic plan after five runs.
// With the batch written in, that plan must be the plan Postgres picks for
// the actual parameters, and walk the claim index: with LIMIT as a
// parameter the generic plan read and hashed the whole queue (30 ms instead
// of 1 ms at 100k due rows). (A one-workspace claim is planned every run.)
// 50,000 leads: on a smaller table reading all of it costs less than 100
// lookups, and a custom plan, which expects the whole batch where the
// generic one (not knowing the claim's lower bound) expects a third of
// it, rightly hashes it.
func TestEnrichClaimGenericPlanIsTheCustomPlan(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		l AS (
			INSERT INTO leads (workspace_id, external_id, first_name, last_name, company_domain)
			SELECT w.id, 'p' || g, 'F', 'L', 'x.example' FROM w, generate_series(1, 50000) g
			RETURNING id, workspace_id
		)
		INSERT INTO lead_enrichment (lead_id, workspace_id, next_attempt_at, updated_at)
		SELECT id, workspace_id, now() - interval '1 hour', now() - interval '1 hour' FROM l`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE leads, lead_enrichment`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	sql, args := prepared(t, store.EnrichClaimSQL(100), map[string]string{
		"lease_seconds": "300", "tick_id": "'plan-test'", "workspace_id": "NULL", "tick_started": "now()", "after": "'-infinity'"})
	if _, err := tx.Exec(ctx, `PREPARE claim AS `+sql); err != nil {
		t.Fatal(err)
	}
	explain := func(mode string) string {
		t.Helper()
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) EXECUTE claim(`+args+`)`)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		// Plan nodes only: conditions print parameters as $n in one plan
		// and as values in the other.
		var nodes []string
		for _, l := range lines {
			if !strings.Contains(l, ":") {
				nodes = append(nodes, l)
			}
		}
		return strings.Join(nodes, "\n")
	}
	generic, custom := explain("force_generic_plan"), explain("force_custom_plan")
	if generic != custom {
		t.Errorf("the generic plan differs from the custom one\ngeneric:\n%s\ncustom:\n%s", generic, custom)
	}
	if !strings.Contains(generic, "lead_enrichment_claim_idx") || strings.Contains(generic, "Seq Scan on lead_enrichment") {
		t.Errorf("the generic plan does not walk lead_enrichment_claim_idx:\n%s", generic)
	}
}

func TestClaimSQLWritesTheBatchIn(t *testing.T) {
	t.Parallel()
	sql := store.EnrichClaimSQL(250)
	if !strings.Contains(sql, "LIMIT 250") || strings.Contains(sql, "/* batch */") {
		t.Fatalf("claim SQL does not carry the batch as a literal:\n%s", sql)
	}
	defer func() {
		if recover() == nil {
			t.Error("a query without the batch marker: want a panic naming it")
		}
	}()
	store.WithBatch(store.EmailClaimSQL, 10)
}
