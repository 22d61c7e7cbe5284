package guard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// auditRows lists action=affected of actor's audit rows, oldest first.
func auditRows(t *testing.T, pool *pgxpool.Pool, actor string) []string {
	t.Helper()
	return storetest.Column[string](t, pool,
		`SELECT action || '=' || affected || ' ' || (filters->>'provider') FROM audit_log WHERE actor = $1 ORDER BY id`, actor)
}

// Operator actions by workspace name: each change and its audit row land
// together; resetting a closed breaker is recorded with nothing affected.
// (TestOperatorOpenAndReset covers what an open breaker refuses.)
func TestBreakerTargetOpenResetAudited(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	newWorkspace(t, db.Pool, "acme")
	ctx := context.Background()
	target := guard.BreakerTarget{Workspace: "acme", Provider: "hunter"}

	until, err := target.Open(ctx, db.Pool, time.Hour, "credits gone", "dana")
	if err != nil || until.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("open for 1h: until %s, %v", until, err)
	}
	var reason, forText string
	if err := db.Pool.QueryRow(ctx, `SELECT filters->>'reason', filters->>'for' FROM audit_log WHERE action = 'breaker.open'`).Scan(&reason, &forText); err != nil || reason != "credits gone" || forText != "1h0m0s" {
		t.Fatalf("breaker.open audit filters: reason %q for %q (%v)", reason, forText, err)
	}
	for _, want := range []bool{true, false} {
		if closed, err := target.Reset(ctx, db.Pool, "dana"); err != nil || closed != want {
			t.Fatalf("reset: closed=%v err=%v, want closed=%v", closed, err, want)
		}
	}
	got := auditRows(t, db.Pool, "dana")
	want := []string{"breaker.open=1 hunter", "breaker.reset=1 hunter", "breaker.reset=0 hunter"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("audit rows %q, want %q", got, want)
	}
}

// An unknown workspace changes nothing, and a failing audit insert takes
// the breaker change with it: never a hand-made change without its record.
func TestBreakerTargetAllOrNothing(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	newWorkspace(t, db.Pool, "acme")
	ctx := context.Background()

	if _, err := (guard.BreakerTarget{Workspace: "nope", Provider: "hunter"}).Open(ctx, db.Pool, time.Hour, "manual", "dana"); !errors.Is(err, store.ErrNoWorkspace) {
		t.Fatalf("open of an unknown workspace: %v, want ErrNoWorkspace", err)
	}
	if _, err := (guard.BreakerTarget{Workspace: "nope", Provider: "hunter"}).Reset(ctx, db.Pool, "dana"); !errors.Is(err, store.ErrNoWorkspace) {
		t.Fatalf("reset of an unknown workspace: %v, want ErrNoWorkspace", err)
	}

	if _, err := db.Pool.Exec(ctx, `
		CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$;
		CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit();`); err != nil {
		t.Fatal(err)
	}
	if _, err := (guard.BreakerTarget{Workspace: "acme", Provider: "hunter"}).Open(ctx, db.Pool, time.Hour, "manual", "dana"); err == nil {
		t.Fatal("open succeeded though its audit row was refused")
	}
	var breakers, events int
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM breakers WHERE state <> 'closed'), (SELECT count(*) FROM events)`).Scan(&breakers, &events); err != nil {
		t.Fatal(err)
	}
	if breakers != 0 || events != 0 {
		t.Fatalf("after a refused audit row: %d open breakers, %d events; want none", breakers, events)
	}
}
