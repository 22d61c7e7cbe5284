package prune_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/prune"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

const day = 24 * time.Hour

// floors keeps every table at its floor: the least prune may keep, so a
// row the product reads that it deletes shows here.
func floors() prune.Keeps {
	k := prune.Keeps{}
	for _, r := range prune.Rules {
		k[r.Table] = r.Floor
	}
	return k
}

// tickTables keeps the tables the tick role may not delete (kept unless
// asked for) out of a run.
func tickTables(k prune.Keeps) prune.Keeps {
	k[prune.AuditLog], k[prune.Enrollments] = prune.Forever, prune.Forever
	return k
}

// The rows on either side of each table's cutoff (one second each way),
// and the rows kept whatever their age, with every keep at its floor, as
// the tick role of sql/roles.sql. Batches of 2 walk each table in several
// statements. A second run deletes nothing.
func TestPruneKeepsBoundaryRows(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	keeps := tickTables(floors())
	cut := func(tbl prune.Table) time.Time { return now.Add(-keeps[tbl]) }
	sec := time.Second

	// sends: 30 days.
	c := cut(prune.Sends)
	eActive, eFailed, eUnknown := h.enrollment("active", now.Add(-100*day)), h.enrollment("failed", now.Add(-100*day)), h.enrollment("delivery_unknown", now.Add(-100*day))
	eDone, eReplied, eBounced, eUnsub := h.enrollment("completed", now.Add(-60*day)), h.enrollment("replied", now.Add(-60*day)),
		h.enrollment("bounced", now.Add(-60*day)), h.enrollment("unsubscribed", now.Add(-60*day))
	keptSends := []int64{
		h.send(eActive, 1, "sent", now.Add(-90*day)),              // threads the active enrollment's next step
		h.send(eFailed, 1, "sent", now.Add(-90*day)),              // a requeue revives the enrollment
		h.send(eUnknown, 1, "delivery_unknown", now.Add(-90*day)), // unsettled, and requeue reads it
		h.send(eDone, 3, "sending", now.Add(-60*day)),             // unsettled
	}
	goneSends := []int64{
		h.send(eDone, 1, "failed", c.Add(-sec)),
		h.send(eDone, 2, "sent", c.Add(-sec)),
		h.send(eReplied, 1, "sent", c.Add(-sec)),
		h.send(eBounced, 1, "sent", c.Add(-sec)),
		h.send(eUnsub, 1, "sent", c.Add(-sec)),
	}
	keptSends = append(keptSends, h.send(eDone, 4, "sent", c.Add(sec)))

	// provider_calls: 62 days, never inside the previous UTC month.
	c = cut(prune.ProviderCalls)
	keptCalls := []int64{h.call("reserved", 0.01, now.Add(-100*day))}
	goneCalls := []int64{h.call("settled", 0.01, c.Add(-sec)), h.call("refunded", 0.01, c.Add(-sec))}
	keptCalls = append(keptCalls, h.call("settled", 0.01, c.Add(sec)))

	// events: 35 days. Episode 7 of findymail's breaker is open.
	c = cut(prune.Events)
	delivered := now.Add(-300 * day)
	h.breaker("open", 7, now.Add(time.Hour))
	keptEvents := []int64{
		h.event("quota_exhausted", true, &delivered, 7, now.Add(-200*day)),
		h.event("breaker_opened", false, nil, 7, now.Add(-200*day)),
		h.event("ceiling_reached", true, nil, 0, now.Add(-100*day)), // not yet delivered
	}
	goneEvents := []int64{
		h.event("quota_exhausted", true, &delivered, 6, c.Add(-sec)),
		h.event("breaker_closed", false, nil, 6, c.Add(-sec)),
	}
	keptEvents = append(keptEvents, h.event("quota_exhausted", true, &delivered, 6, c.Add(sec)))

	// tick_runs: 2 days; each kind's newest run, 16 newest successes and
	// newest failure stay, however old.
	c = cut(prune.TickRuns)
	goneRuns := []int64{h.run("inbox", 1, now.Add(-10*day))}
	keptRuns := []int64{h.run("inbox", 0, now.Add(-9*day)), h.run("inbox", 1, now.Add(-7*day))}
	goneRuns = append(goneRuns, h.run("email", 1, c.Add(-2*sec)), h.run("email", 0, c.Add(-sec)))
	keptRuns = append(keptRuns, h.run("email", 0, c.Add(sec)), h.run("email", 1, c.Add(2*sec)))
	for i := range 16 {
		keptRuns = append(keptRuns, h.run("email", 0, c.Add(time.Duration(i+1)*time.Hour)))
	}

	tickPool := db.TickPool(t)
	for i := range 2 {
		// A window of one: the mailbox's newest send (the young one) is
		// its bounce-rate window (TestPruneKeepsEachMailboxsBounceWindow).
		rep, err := prune.Run(ctx, tickPool, prune.Options{Keeps: keeps, Batch: 2, Now: now, BounceWindow: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(len(goneSends) + len(goneCalls) + len(goneEvents) + len(goneRuns))
		if i == 1 {
			want = 0 // idempotent
		}
		if rep.Deleted != want || rep.Stopped {
			t.Errorf("run %d: deleted %d rows (stopped %v), want %d: %+v", i+1, rep.Deleted, rep.Stopped, want, rep.Tables)
		}
		expect(t, db.Pool, "sends", keptSends, goneSends)
		expect(t, db.Pool, "provider_calls", keptCalls, goneCalls)
		expect(t, db.Pool, "events", keptEvents, goneEvents)
		expect(t, db.Pool, "tick_runs", keptRuns, goneRuns)
	}
	// Asked for nothing, the tick role's run leaves these alone.
	for _, table := range []string{"enrollments", "audit_log"} {
		if n := len(ids(t, db.Pool, table)); table == "enrollments" && n != 7 {
			t.Errorf("enrollments: %d left, want all 7", n)
		}
	}
}

// audit_log and enrollments go only when asked for, by a role that may
// delete them; an ended enrollment takes its sends along.
func TestPruneOptInTables(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	keeps := floors()
	for _, tbl := range []prune.Table{prune.Sends, prune.ProviderCalls, prune.Events, prune.TickRuns} {
		keeps[tbl] = prune.Forever
	}
	c, sec := now.Add(-30*day), time.Second
	kept := []int64{h.enrollment("active", now.Add(-100*day)), h.enrollment("failed", now.Add(-100*day)), h.enrollment("delivery_unknown", now.Add(-100*day))}
	gone := []int64{h.enrollment("completed", c.Add(-sec)), h.enrollment("replied", c.Add(-sec)), h.enrollment("bounced", c.Add(-sec)), h.enrollment("unsubscribed", c.Add(-sec))}
	goneSend := h.send(gone[0], 1, "sent", c.Add(-2*sec))
	kept = append(kept, h.enrollment("completed", c.Add(sec)))
	goneAudit, keptAudit := h.audit(c.Add(-sec)), h.audit(c.Add(sec))

	// The tick role may not: the run fails, naming the table.
	_, err := prune.Run(ctx, db.TickPool(t), prune.Options{Keeps: keeps, Now: now})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("tick role pruning audit_log/enrollments: err = %v, want permission denied", err)
	}
	rep, err := prune.Run(ctx, db.Pool, prune.Options{Keeps: keeps, Batch: 2, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Deleted != int64(len(gone)+1) {
		t.Errorf("deleted %d, want %d: %+v", rep.Deleted, len(gone)+1, rep.Tables)
	}
	expect(t, db.Pool, "enrollments", kept, gone)
	expect(t, db.Pool, "sends", nil, []int64{goneSend})
	expect(t, db.Pool, "audit_log", []int64{keptAudit}, []int64{goneAudit})
}

// Whatever the keep, the ledger keeps the previous and the current UTC
// month: the ceiling and status read them.
func TestPruneLedgerKeepsPreviousMonth(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	h := newHistory(t, db.Pool)
	monthStart := time.Date(2026, time.February, 1, 0, 0, 0, 0, time.UTC)
	gone := h.call("settled", 1, monthStart.Add(-time.Second))
	kept := []int64{h.call("settled", 1, monthStart), h.call("settled", 1, monthStart.Add(time.Second))}
	now := time.Date(2026, time.March, 31, 12, 0, 0, 0, time.UTC)
	keeps := prune.Keeps{}
	for _, r := range prune.Rules {
		keeps[r.Table] = prune.Forever
	}
	keeps[prune.ProviderCalls] = 31 * day // 28 February at noon, inside February
	if _, err := prune.Run(context.Background(), db.TickPool(t), prune.Options{Keeps: keeps, Now: now}); err != nil {
		t.Fatal(err)
	}
	expect(t, db.Pool, "provider_calls", kept, []int64{gone})
}

func TestParseKeeps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		spec, err string
		want      time.Duration
	}{
		{spec: "sends=30d", want: 30 * day},
		{spec: "sends=2160h", want: 90 * day},
		{spec: "events=forever", want: prune.Forever},
		{spec: " tick_runs = 7d ", want: 7 * day},
		{spec: "sends=29d", err: "sends keeps at least 30d, because mailbox caps count the last 24 hours"},
		{spec: "provider_calls=61d", err: "provider_calls keeps at least 62d, because the spend ceiling"},
		{spec: "tick_runs=47h", err: "tick_runs keeps at least 2d"},
		{spec: "leads=90d", err: `unknown table "leads"; use one of sends, provider_calls, events, tick_runs, audit_log, enrollments`},
		{spec: "sends", err: "use TABLE=DURATION"},
		{spec: "sends=0d", err: "invalid duration"},
		{spec: "sends=-5h", err: "invalid duration"},
		{spec: "sends=soon", err: "invalid duration"},
	} {
		keeps, err := prune.ParseKeeps([]string{tt.spec})
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: err = %v, want it to say %q", tt.spec, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.spec, err)
		case tt.err == "":
			table, _, _ := strings.Cut(tt.spec, "=")
			if got := keeps.Of(prune.Table(strings.TrimSpace(table))); got != tt.want {
				t.Errorf("%q: keep %v, want %v", tt.spec, got, tt.want)
			}
		}
	}
	// A table not named keeps its default.
	if got := (prune.Keeps{}).Of(prune.Sends); got != 90*day {
		t.Errorf("default sends keep %v, want 90d", got)
	}
}

// A run starts no batch at or after StopAt, and the next run carries on to
// exactly what a dry run counted. The clock moves a minute per look, so
// the bound is a count of batches, not a wall-clock race.
func TestPruneStopsAtMaxDuration(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	done := h.enrollment("completed", now.Add(-200*day))
	for step := 1; step <= 10; step++ {
		h.send(done, step, "sent", now.Add(-100*day))
	}
	pool := db.TickPool(t)
	keeps := tickTables(prune.Keeps{})

	h.send(h.enrollment("active", now), 1, "sent", now) // the mailbox's bounce-rate window of one
	dry, err := prune.Run(ctx, pool, prune.Options{Keeps: keeps, Now: now, DryRun: true, BounceWindow: 1})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Deleted != 10 || len(ids(t, db.Pool, "sends")) != 11 {
		t.Fatalf("dry run: would delete %d, %d sends left; want 10 and 11", dry.Deleted, len(ids(t, db.Pool, "sends")))
	}

	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	looks := 0
	clock := func() time.Time { looks++; return start.Add(time.Duration(looks-1) * time.Minute) }
	rep, err := prune.Run(ctx, pool, prune.Options{Keeps: keeps, Batch: 2, Now: now, StopAt: start.Add(3 * time.Minute), Clock: clock, BounceWindow: 1})
	if err != nil {
		t.Fatal(err)
	}
	batches := 0
	for _, tr := range rep.Tables {
		batches += tr.Batches
	}
	if !rep.Stopped || batches != 3 || rep.Deleted != 2 {
		t.Fatalf("bounded run: stopped %v after %d batches, deleted %d; want stopped after 3 batches (sends, provider_calls, events), 2 deleted", rep.Stopped, batches, rep.Deleted)
	}
	rep, err = prune.Run(ctx, pool, prune.Options{Keeps: keeps, Batch: 2, Now: now, BounceWindow: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stopped || rep.Deleted != 8 {
		t.Errorf("next run: deleted %d (stopped %v), want the other 8", rep.Deleted, rep.Stopped)
	}
}

// A row another transaction holds is skipped, never waited for: with a
// lock_timeout of 100 ms, one wait would fail the run. It goes next time.
func TestPruneSkipsHeldRows(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	done := h.enrollment("completed", now.Add(-200*day))
	held, free := h.send(done, 1, "sent", now.Add(-100*day)), h.send(done, 2, "sent", now.Add(-100*day))
	h.send(h.enrollment("active", now), 1, "sent", now) // the mailbox's bounce-rate window of one

	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT 1 FROM sends WHERE id = $1 FOR KEY SHARE", held); err != nil {
		t.Fatal(err)
	}
	impatient, err := store.Open(ctx, store.Config{URL: db.TickURL(), LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	keeps := tickTables(prune.Keeps{})
	rep, err := prune.Run(ctx, impatient, prune.Options{Keeps: keeps, Now: now, BounceWindow: 1})
	if err != nil {
		t.Fatalf("prune waited for a held row: %v", err)
	}
	if rep.Tables[0].Deleted != 1 || rep.Tables[0].Skipped != 1 {
		t.Errorf("sends: deleted %d, skipped %d; want 1 and 1", rep.Tables[0].Deleted, rep.Tables[0].Skipped)
	}
	expect(t, db.Pool, "sends", []int64{held}, []int64{free})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := prune.Run(ctx, impatient, prune.Options{Keeps: keeps, Now: now, BounceWindow: 1}); err != nil {
		t.Fatal(err)
	}
	expect(t, db.Pool, "sends", nil, []int64{held})
}

// The bounce-rate guard (issue 25) reads each mailbox's newest 200 sends
// that reached a server, however old: a mailbox that sends little reaches
// back months. Those stay; with a window of 2 here, the third newest goes.
// A hard bounce counts in the window even when its send is 'failed'; a
// mailbox with fewer sends than the window keeps them all.
func TestPruneKeepsEachMailboxsBounceWindow(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	h := newHistory(t, db.Pool)
	now := dbNow(t, db.Pool)
	old := now.Add(-100 * day)
	done := h.enrollment("completed", now.Add(-200*day))
	gone := []int64{h.send(done, 1, "sent", old), h.send(done, 2, "failed", old.Add(time.Second))}
	bounced := h.send(done, 3, "failed", old.Add(2*time.Second))
	if _, err := db.Pool.Exec(ctx, `UPDATE sends SET bounced_at = now() WHERE id = $1`, bounced); err != nil {
		t.Fatal(err)
	}
	kept := []int64{bounced, h.send(done, 4, "sent", old.Add(3*time.Second))}

	quiet := h.id(`INSERT INTO mailboxes (workspace_id, address, smtp_url) VALUES ($1, 'quiet@acme.test', 'smtp://127.0.0.1:1') RETURNING id`, h.ws)
	h.mailbox = quiet
	kept = append(kept, h.send(done, 5, "sent", old.Add(4*time.Second)))

	keeps := tickTables(prune.Keeps{})
	if _, err := prune.Run(ctx, db.TickPool(t), prune.Options{Keeps: keeps, Now: now, BounceWindow: 2}); err != nil {
		t.Fatal(err)
	}
	expect(t, db.Pool, "sends", kept, gone)
}
