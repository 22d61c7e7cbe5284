package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMigrateTwiceIsNoop(t *testing.T) {
	t.Parallel()
	db := storetest.New(t) // already migrated from the template
	applied, err := store.Migrate(context.Background(), db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 0 {
		t.Fatalf("second migrate applied %d migrations, want 0", len(applied))
	}
	st, err := store.MigrationStatus(context.Background(), db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) == 0 {
		t.Fatal("migration status lists no versions")
	}
	for _, s := range st {
		if !s.Applied {
			t.Errorf("migration %d (%s) not applied", s.Version, s.Name)
		}
	}
}

func TestConcurrentMigrateOnEmptyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, storetest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := "t_empty_" + strings.ReplaceAll(t.Name(), "/", "_")
	name = strings.ToLower(name)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })

	url := storetest.WithDatabase(storetest.AdminURL(), name)
	const runs = 4
	var wg sync.WaitGroup
	applied := make([]int, runs)
	errs := make([]error, runs)
	start := make(chan struct{})
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := store.Open(ctx, store.Config{URL: url})
			if err != nil {
				errs[i] = err
				return
			}
			defer pool.Close()
			<-start
			res, err := store.Migrate(ctx, pool)
			applied[i], errs[i] = len(res), err
		}()
	}
	close(start)
	wg.Wait()
	total := 0
	for i := range runs {
		if errs[i] != nil {
			t.Fatalf("migrate run %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	pool, err := store.Open(ctx, store.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st, err := store.MigrationStatus(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if total != len(st) {
		t.Fatalf("concurrent runs applied %d migrations in total, want exactly %d (each once)", total, len(st))
	}
}

func TestUnknownStatusRejected(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	var ws, lead int64
	if err := db.Pool.QueryRow(ctx, "INSERT INTO workspaces (name) VALUES ('acme') RETURNING id").Scan(&ws); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.QueryRow(ctx, "INSERT INTO leads (workspace_id, first_name) VALUES ($1, 'Ada') RETURNING id", ws).Scan(&lead); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"lead_enrichment":                    "INSERT INTO lead_enrichment (lead_id, workspace_id, status) VALUES ($1, $2, 'enrichment_maybe')",
		"unreachable without negative cache": "INSERT INTO lead_enrichment (lead_id, workspace_id, status) VALUES ($1, $2, 'unreachable')",
	}
	for name, q := range cases {
		_, err := db.Pool.Exec(ctx, q, lead, ws)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
			t.Errorf("%s: got %v, want a check_violation (23514)", name, err)
		}
	}
	if _, err := db.Pool.Exec(ctx, "INSERT INTO lead_enrichment (lead_id, workspace_id) VALUES ($1, $2)", lead, ws); err != nil {
		t.Fatalf("valid pending row rejected: %v", err)
	}
	_, err := db.Pool.Exec(ctx, "INSERT INTO tick_runs (kind, tick_id, host, pid) VALUES ('sleep', 'x', 'h', 1)")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Errorf("tick_runs with unknown kind: got %v, want a check_violation", err)
	}
}

func TestClaimIndexesExist(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	want := map[string]string{
		"lead_enrichment_claim_idx": "WHERE (status = ANY",
		"enrollments_claim_idx":     "WHERE (status = 'active'",
		"events_alert_due_idx":      "WHERE ((delivered_at IS NULL) AND alert)",
	}
	for name, pred := range want {
		var def string
		err := db.Pool.QueryRow(context.Background(), "SELECT indexdef FROM pg_indexes WHERE indexname = $1", name).Scan(&def)
		if err != nil {
			t.Errorf("index %s: %v", name, err)
			continue
		}
		if !strings.Contains(def, pred) {
			t.Errorf("index %s is not partial as expected: %s", name, def)
		}
	}
}

func TestOpenErrorHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), store.Config{URL: "postgres://alice:s3cr3t-Pa55@127.0.0.1:1/rindactl?sslmode=disable"})
	if err == nil {
		t.Fatal("connecting to port 1 succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cr3t-Pa55") {
		t.Fatalf("error leaks the password: %s", msg)
	}
	if !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, "\n") {
		t.Fatalf("want one line naming host and port, got %q", msg)
	}

	_, err = store.Open(context.Background(), store.Config{URL: "postgres://alice:s3cr3t-Pa55@127.0.0.1:1:2/x"})
	if err == nil || strings.Contains(err.Error(), "s3cr3t-Pa55") {
		t.Fatalf("invalid URL error leaks the password or is nil: %v", err)
	}
}

func TestOpenWrongPassword(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	// A role with a password, reached over TCP with a wrong one: the
	// throwaway cluster trusts loopback, so instead check a missing database,
	// which also goes through the server's error path.
	_, err := store.Open(ctx, store.Config{URL: storetest.WithDatabase(db.URL, "no_such_db_here")})
	if err == nil || !strings.Contains(err.Error(), `database "no_such_db_here" does not exist`) {
		t.Fatalf("got %v", err)
	}
}

func TestTickRoleHasNoDDLAndNoOperatorTables(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	tick := db.TickPool(t)
	ctx := context.Background()
	if _, err := tick.Exec(ctx, "SELECT count(*) FROM lead_enrichment"); err != nil {
		t.Fatalf("tick role cannot read its queue: %v", err)
	}
	for _, q := range []string{
		"CREATE TABLE sneaky (id int)",
		"DROP TABLE leads",
		"ALTER TABLE leads ADD COLUMN x int",
		"DELETE FROM audit_log",
		"UPDATE workspaces SET monthly_usd_ceiling = 1e9",
		"UPDATE leads SET first_name = 'x'",
	} {
		_, err := tick.Exec(ctx, q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || (pgErr.Code != "42501" && pgErr.Code != "42P01") {
			t.Errorf("%s as the tick role: got %v, want insufficient_privilege", q, err)
		}
	}
}

func TestEveryConnectionCarriesSafetySettings(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	want := map[string]string{"statement_timeout": "30s", "lock_timeout": "5s"}
	for name, v := range want {
		var got string
		if err := db.Pool.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
}
