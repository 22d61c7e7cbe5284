package requeue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/requeue"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// quotaSQL is the incident after the fix: $1 leads of workspace acme parked
// as unreachable by an exhausted findymail quota, 10 of beta's by hunter,
// the findymail breaker open.
const quotaSQL = `
INSERT INTO workspaces (name) VALUES ('acme'), ('beta');
INSERT INTO leads (workspace_id, external_id) SELECT 1, 'a-' || g FROM generate_series(1, $1::int) g;
INSERT INTO leads (workspace_id, external_id) SELECT 2, 'b-' || g FROM generate_series(1, 10) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, negative_cache_until, provider, last_error)
SELECT l.id, l.workspace_id, 'unreachable', 1, now() + interval '1 day', now() + interval '1 day',
       CASE WHEN l.workspace_id = 1 THEN 'findymail' ELSE 'hunter' END, 'quota_exhausted (HTTP 429)'
FROM leads l;
INSERT INTO breakers (workspace_id, provider, state, open_until, reason, opened_at)
VALUES (1, 'findymail', 'open', now() + interval '5 minutes', 'quota_exhausted', now());
`

func seedQuota(t testing.TB, pool *pgxpool.Pool, leads int) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// One statement per Exec: parameters need the extended protocol.
	for _, stmt := range splitSQL(quotaSQL) {
		var args []any
		if containsParam(stmt) {
			args = []any{leads}
		}
		if _, err := tx.Exec(ctx, stmt, args...); err != nil {
			t.Fatalf("seed %q: %v", stmt, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestQuotaScenario is the acceptance scenario at the SQL level:
// status shows the unreachable leads and the open breaker; a dry run counts
// them and changes nothing; after the breaker is reset a requeue makes every
// lead pending and due, and leaves one audit row.
func TestQuotaScenario(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	seedQuota(t, db.Pool, 40)

	rep, err := status.Build(ctx, db.Pool, time.Now(), status.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Enrich.ByStatus["unreachable"] != 50 || rep.Enrich.Blocked.NegativeCache != 50 {
		t.Errorf("status enrich = %+v", rep.Enrich)
	}
	if len(rep.Breakers) != 1 || rep.Breakers[0].State != "open" || rep.Breakers[0].Provider != "findymail" {
		t.Errorf("status breakers = %+v", rep.Breakers)
	}

	f := requeue.Filter{Status: "unreachable", Workspace: "acme"}
	plan, err := requeue.Prepare(ctx, db.Pool, f)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Matched != 40 || len(plan.Groups) != 1 || plan.Groups[0] != (requeue.Group{Workspace: "acme", Provider: "findymail", Count: 40}) {
		t.Errorf("dry run = %+v", plan)
	}
	if n := count(t, db.Pool, "SELECT count(*) FROM lead_enrichment WHERE status = 'unreachable'"); n != 50 {
		t.Errorf("dry run changed rows: %d unreachable", n)
	}

	if _, err := db.Pool.Exec(ctx, "UPDATE breakers SET state = 'closed', open_until = NULL, reason = NULL"); err != nil {
		t.Fatal(err)
	}
	res, err := requeue.Run(ctx, db.Pool, plan, requeue.Options{BatchSize: 7, Actor: "oncall"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != 40 || res.Batches != 6 {
		t.Errorf("run = %+v, want 40 rows in 6 batches", res)
	}
	if n := count(t, db.Pool, `SELECT count(*) FROM lead_enrichment WHERE workspace_id = 1 AND status = 'pending'
		AND next_attempt_at <= now() AND negative_cache_until IS NULL AND attempts = 0 AND last_error IS NULL`); n != 40 {
		t.Errorf("%d acme leads pending and due, want 40", n)
	}
	if n := count(t, db.Pool, "SELECT count(*) FROM lead_enrichment WHERE workspace_id = 2 AND status = 'unreachable'"); n != 10 {
		t.Errorf("beta leads touched: %d still unreachable, want 10", n)
	}
	if n := count(t, db.Pool, `SELECT count(*) FROM audit_log WHERE actor = 'oncall' AND action = 'requeue' AND affected = 40
		AND filters @> '{"status": "unreachable", "workspace": "acme"}'`); n != 1 {
		t.Errorf("%d matching audit rows, want 1", n)
	}
	// Nothing left: a second plan matches nothing.
	plan, err = requeue.Prepare(ctx, db.Pool, f)
	if err != nil || plan.Matched != 0 {
		t.Errorf("second plan = %+v, %v", plan, err)
	}
}

func TestRequeueFilters(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	seedQuota(t, db.Pool, 5)
	for _, f := range []requeue.Filter{
		{Status: "enriched"},
		{Status: ""},
		{Status: "unreachable", Campaign: "q3"},
		{Status: "failed", Provider: "hunter"},
		{Status: "unreachable", Workspace: "nope"},
		{Status: "unreachable", Limit: -1},
	} {
		var fe *requeue.FilterError
		if _, err := requeue.Prepare(ctx, db.Pool, f); !errors.As(err, &fe) {
			t.Errorf("%+v: err = %v, want FilterError", f, err)
		}
	}
	// provider, older-than and limit narrow the run.
	plan, err := requeue.Prepare(ctx, db.Pool, requeue.Filter{Status: "unreachable", Provider: "hunter", Limit: 4})
	if err != nil || plan.Matched != 10 || plan.WouldMove != 4 {
		t.Fatalf("plan = %+v, %v", plan, err)
	}
	res, err := requeue.Run(ctx, db.Pool, plan, requeue.Options{Actor: "t"})
	if err != nil || res.Moved != 4 {
		t.Errorf("limited run = %+v, %v", res, err)
	}
	plan, err = requeue.Prepare(ctx, db.Pool, requeue.Filter{Status: "unreachable", OlderThan: time.Hour})
	if err != nil || plan.Matched != 0 {
		t.Errorf("older-than 1h matched %+v, %v", plan, err)
	}
}

func TestRequeueFailedEnrollments(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	_, err := db.Pool.Exec(ctx, `
INSERT INTO workspaces (name) VALUES ('acme');
INSERT INTO leads (workspace_id, email) SELECT 1, 'l' || g || '@x.test' FROM generate_series(1, 3) g;
INSERT INTO campaigns (workspace_id, name) VALUES (1, 'q3'), (1, 'q4');
INSERT INTO mailboxes (workspace_id, address, smtp_url) VALUES (1, 'a@acme.test', 'smtp://mx');
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, current_step, next_send_at, mailbox_id, attempts, last_error)
VALUES (1, 1, 1, 'failed', 2, now() - interval '1 day', 1, 5, '421 try later'),
       (1, 2, 1, 'failed', 1, now() - interval '1 day', 1, 5, '421 try later'),
       (2, 3, 1, 'failed', 1, now() - interval '1 day', 1, 5, '421 try later');
INSERT INTO sends (enrollment_id, step, mailbox_id, message_id, status)
VALUES (1, 1, 1, 'm1', 'sent'), (1, 2, 1, 'm2', 'failed'), (2, 1, 1, 'm3', 'failed');`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := requeue.Prepare(ctx, db.Pool, requeue.Filter{Status: "failed", Campaign: "q3"})
	if err != nil || plan.Matched != 2 || plan.Groups[0].Campaign != "q3" {
		t.Fatalf("plan = %+v, %v", plan, err)
	}
	res, err := requeue.Run(ctx, db.Pool, plan, requeue.Options{Actor: "t"})
	if err != nil || res.Moved != 2 {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if n := count(t, db.Pool, `SELECT count(*) FROM enrollments WHERE campaign_id = 1 AND status = 'active'
		AND next_send_at <= now() AND attempts = 0 AND last_error IS NULL`); n != 2 {
		t.Errorf("%d q3 enrollments active and due, want 2", n)
	}
	// The failed sends of the current steps are gone; the sent step stays.
	if got := count(t, db.Pool, "SELECT count(*) FROM sends WHERE status = 'failed'"); got != 0 {
		t.Errorf("%d failed sends left", got)
	}
	if got := count(t, db.Pool, "SELECT count(*) FROM sends WHERE message_id = 'm1'"); got != 1 {
		t.Errorf("sent step removed")
	}
	if got := count(t, db.Pool, "SELECT count(*) FROM enrollments WHERE campaign_id = 2 AND status = 'failed'"); got != 1 {
		t.Errorf("q4 enrollment touched")
	}
}

// TestRequeueBesideClaims requeues 86,000 leads while a tick-like loop keeps
// claiming due rows (FOR UPDATE SKIP LOCKED, as the enrich tick does). It
// reports the longest claim statement; the bound asserted is only that every
// claim finished and every lead moved (timings belong in benchmarks).
func TestRequeueBesideClaims(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	seedQuota(t, db.Pool, 86000)
	plan, err := requeue.Prepare(ctx, db.Pool, requeue.Filter{Status: "unreachable", Workspace: "acme"})
	if err != nil || plan.Matched != 86000 {
		t.Fatalf("plan = %v, %v", plan.Matched, err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var longest time.Duration
	var claims, claimed int64
	var claimErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		longest, claims, claimed, claimErr = claimLoop(ctx, db.Pool, stop)
	}()
	start := time.Now()
	res, err := requeue.Run(ctx, db.Pool, plan, requeue.Options{Actor: "t"})
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if claimErr != nil {
		t.Fatalf("claim loop: %v", claimErr)
	}
	// Every lead moved exactly once: either still pending or claimed by the
	// loop after it became due.
	if res.Moved != 86000 || res.Batches != 18 {
		t.Errorf("run = %d rows in %d batches, want 86000 in 18", res.Moved, res.Batches)
	}
	if claims == 0 {
		t.Errorf("the claim loop never ran")
	}
	t.Logf("requeue of 86,000 rows: %s in %d batches; beside it %d claims (%d rows), longest claim %s",
		elapsed.Round(time.Millisecond), res.Batches, claims, claimed, longest.Round(time.Microsecond))
}

// claimLoop claims like an enrich tick until stop closes, and returns the
// longest single claim statement.
func claimLoop(ctx context.Context, pool *pgxpool.Pool, stop <-chan struct{}) (longest time.Duration, claims, claimed int64, err error) {
	const claim = `
WITH due AS (
    SELECT lead_id FROM lead_enrichment
    WHERE status IN ('pending', 'in_progress', 'unreachable') AND next_attempt_at <= now()
    ORDER BY next_attempt_at LIMIT 200
    FOR UPDATE SKIP LOCKED)
UPDATE lead_enrichment le
SET status = 'in_progress', attempts = attempts + 1, locked_by = 'bench', locked_until = now() + interval '5 minutes',
    next_attempt_at = now() + interval '5 minutes'
FROM due WHERE le.lead_id = due.lead_id`
	for {
		select {
		case <-stop:
			return longest, claims, claimed, nil
		default:
		}
		start := time.Now()
		tag, err := pool.Exec(ctx, claim)
		if err != nil {
			return longest, claims, claimed, err
		}
		longest = max(longest, time.Since(start))
		claims++
		claimed += tag.RowsAffected()
	}
}

// Issue 24: a requeue keeps what providers already answered (an address
// paid for and awaiting verification, the finders that found nothing), so
// nothing is bought twice; --refind forgets it, for an operator who wants
// the finders asked again.
func TestRequeueKeepsPaidAnswersUnlessRefind(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	seedQuota(t, db.Pool, 4)
	if _, err := db.Pool.Exec(ctx, `UPDATE lead_enrichment SET found_email = 'ada@acme.test', found_by = 'findymail', missed_by = '{hunter}'`); err != nil {
		t.Fatal(err)
	}
	run := func(f requeue.Filter) {
		t.Helper()
		plan, err := requeue.Prepare(ctx, db.Pool, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := requeue.Run(ctx, db.Pool, plan, requeue.Options{Actor: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	run(requeue.Filter{Status: "unreachable", Workspace: "acme"})
	if n := count(t, db.Pool, `SELECT count(*) FROM lead_enrichment WHERE status = 'pending' AND found_email = 'ada@acme.test' AND missed_by = '{hunter}'`); n != 4 {
		t.Fatalf("%d requeued leads kept their paid address and misses, want 4", n)
	}
	run(requeue.Filter{Status: "unreachable", Workspace: "beta", Refind: true})
	if n := count(t, db.Pool, `SELECT count(*) FROM lead_enrichment WHERE workspace_id = 2 AND (found_email IS NOT NULL OR missed_by <> '{}')`); n != 0 {
		t.Fatalf("%d leads still hold earlier answers after --refind, want 0", n)
	}
	if n := count(t, db.Pool, `SELECT count(*) FROM audit_log WHERE filters->>'refind' = 'true'`); n != 1 {
		t.Fatalf("%d audit rows name the refind, want 1", n)
	}
	if _, err := requeue.Prepare(ctx, db.Pool, requeue.Filter{Status: "failed", Refind: true}); err == nil {
		t.Fatal("--refind on enrollments was accepted")
	}
}
