package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The per-send statements run as cached prepared statements on tables a
// tick is filling: statistics taken before the tick see no locked
// enrollment, and campaign_recipients (written only by ticks) has none at
// all. Planned on that, the settle scanned every enrollment per group and
// the 'sending' record every recipient, so both grew with the campaign.
// Either plan Postgres may pick must reach those rows by key.
func TestEmailPerSendPlansReachRowsByKey(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'plan' FROM w RETURNING id, workspace_id),
		l AS (
			INSERT INTO leads (workspace_id, external_id, first_name, email)
			SELECT w.id, 'p' || g, 'F', 'p' || g || '@x.example' FROM w, generate_series(1, 10000) g
			RETURNING id, workspace_id
		)
		INSERT INTO enrollments (campaign_id, lead_id, workspace_id)
		SELECT c.id, l.id, l.workspace_id FROM c, l`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE leads, enrollments`); err != nil {
		t.Fatal(err)
	}
	// A tick under way: a fifth of the campaign held, half of it mailed.
	if _, err := db.Pool.Exec(ctx, `
		UPDATE enrollments SET locked_by = 'plan-test', locked_until = now() + interval '5 minutes' WHERE id % 5 = 0;
		INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
		SELECT e.campaign_id, l.email, e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE e.id % 2 = 0`); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprint((i + 1) * 5)
	}
	arr := func(v string) string { return "'{" + strings.TrimSuffix(strings.Repeat(v+",", 100), ",") + "}'" }
	idArr := "'{" + strings.Join(ids, ",") + "}'"
	var campaign int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM campaigns`).Scan(&campaign); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query, args, table string
	}{
		{"email_settle", strings.Join([]string{"'plan-test'", idArr, arr("1"), arr("sent"), arr("2026-12-03 10:00+00"), arr(`""`),
			idArr, arr("completed"), arr("2"), arr("2026-12-03 10:00+00"), arr("0"), arr("1"), arr(`""`),
			"'{}'", "'{}'", "'{}'", arr("sent")}, ", "), "enrollments"},
		{"email_sends_begin", strings.Join([]string{idArr, arr("1"), arr("1"), "'{" + strings.Join(ids, "x,") + "x}'",
			arr(fmt.Sprint(campaign)), arr("p1@x.example")}, ", "), "campaign_recipients"},
	}
	for _, c := range cases {
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `PREPARE plan_`+c.query+` AS `+store.Query(c.query)); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
				t.Fatal(err)
			}
			rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) EXECUTE plan_`+c.query+`(`+c.args+`)`)
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			plan := strings.Join(lines, "\n")
			if strings.Contains(plan, "Seq Scan on "+c.table) {
				t.Errorf("%s (%s) scans all of %s:\n%s", c.query, mode, c.table, plan)
			}
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
