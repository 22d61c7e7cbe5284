package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/bench"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// schemas lists the scratch schemas left in the test's database.
func schemas(t *testing.T, db *storetest.DB) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'rindactl_bench_%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestClaimDrainsEveryRowAndDropsItsSchema(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res, err := bench.Claim(context.Background(), bench.ClaimConfig{URL: db.URL, Rows: 1500, Batch: 100, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 1500 || res.Seconds <= 0 || res.RowsPerSec <= 0 {
		t.Fatalf("result %+v: want 1500 rows with a positive time and rate", res)
	}
	if n := schemas(t, db); n != 0 {
		t.Fatalf("%d scratch schemas left behind", n)
	}
	var leads int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM leads`).Scan(&leads); err != nil {
		t.Fatal(err)
	}
	if leads != 0 {
		t.Fatalf("the bench wrote %d leads into the database's own tables", leads)
	}
}

func TestEmailSendsEveryStepTwiceAndReportsTheRatio(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res, err := bench.Email(context.Background(), bench.EmailConfig{URL: db.URL, Steps: 300, Mailboxes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 300 || res.SendsPerSec <= 0 || res.BareSendsPerSec <= 0 || res.Ratio <= 0 {
		t.Fatalf("result %+v: want both loops measured", res)
	}
	if res.TickCPUPerSendUS <= 0 || res.BareCPUPerSendUS <= 0 || res.SMTPDelayMS != 0 {
		t.Fatalf("result %+v: want CPU per send of both loops and no SMTP delay", res)
	}
	// The test cluster of scripts/pg runs on this machine, so its CPU is
	// seen; a server elsewhere leaves the figure out.
	if postgresRunsHere() && (res.PostgresCPUPerSendUS == nil || *res.PostgresCPUPerSendUS < 0) {
		t.Fatalf("result %+v: want the local postgres CPU per send", res)
	}
	if n := schemas(t, db); n != 0 {
		t.Fatalf("%d scratch schemas left behind", n)
	}
}

// With a server that takes time to accept each message, both loops still
// deliver every message and the delay is reported with the figures.
func TestEmailWithAnSMTPDelay(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res, err := bench.Email(context.Background(), bench.EmailConfig{URL: db.URL, Steps: 40, Mailboxes: 4, SMTPDelay: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 40 || res.SMTPDelayMS != 2 || res.Ratio <= 0 {
		t.Fatalf("result %+v: want 40 steps at a 2 ms delay", res)
	}
	// Each mailbox sends its 10 messages in order, each held 2 ms by the
	// server: neither run can take less than 20 ms (a lower bound, not a
	// speed test).
	if least := (10 * 2 * time.Millisecond).Seconds(); res.Seconds < least || res.BareSeconds < least {
		t.Fatalf("result %+v: both runs should take at least %.3fs with the delay applied", res, least)
	}
}

// postgresRunsHere reports whether a postgres process is visible in /proc.
func postgresRunsHere() bool {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == "postgres" {
			return true
		}
	}
	return false
}

func TestRejectsEmptyRuns(t *testing.T) {
	t.Parallel()
	if _, err := bench.Claim(context.Background(), bench.ClaimConfig{Rows: 0}); err == nil {
		t.Error("Claim with no rows: want an error")
	}
	if _, err := bench.Email(context.Background(), bench.EmailConfig{Steps: 10, Mailboxes: 0}); err == nil {
		t.Error("Email with no mailbox: want an error")
	}
	if _, err := bench.Email(context.Background(), bench.EmailConfig{Steps: 10, Mailboxes: 1, SMTPDelay: -time.Second}); err == nil {
		t.Error("Email with a negative SMTP delay: want an error")
	}
}

func BenchmarkClaimPipeline(b *testing.B) {
	db := storetest.New(b)
	for b.Loop() {
		if _, err := bench.Claim(context.Background(), bench.ClaimConfig{URL: db.URL, Rows: 20000}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPostgresCPUCountsTheBenchsOwnCluster(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	pm, err := bench.Postmaster(ctx, db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	if pm == 0 {
		t.Fatal("the test cluster runs on this machine: want its postmaster's pid")
	}
	before := bench.SampleCPU(pm)
	if _, err := db.Pool.Exec(ctx, `SELECT sum(g) FROM generate_series(1, 3000000) g`); err != nil {
		t.Fatal(err)
	}
	_, pg := before.PerItem(bench.SampleCPU(pm), 1)
	if pg == nil || *pg <= 0 {
		t.Fatalf("postgres CPU over a 3M-row sum: got %v, want a positive figure", pg)
	}
	if _, pg := before.PerItem(bench.SampleCPU(0), 1); pg != nil {
		t.Fatalf("no postmaster given: want postgres unknown, got %v", *pg)
	}
}

// The history bench runs both phases end to end at a tiny size: every
// round measured in both schemas, the prune deletes old rows and keeps
// the recent ones, and both scratch schemas are dropped.
func TestHistoryRunsBothPhasesAndPrunes(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res, err := bench.History(context.Background(), bench.HistoryConfig{URL: db.URL,
		Sequences: 400, Calls: 400, Events: 100, TickRuns: 100, Steps: 30, Leads: 30, Mailboxes: 3, Pairs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 2 || res.Rounds[0].Phase != "history" || res.Rounds[1].Phase != "pruned" {
		t.Fatalf("rounds %+v: want one history and one pruned round", res.Rounds)
	}
	if res.Prune.Deleted == 0 {
		t.Fatalf("prune deleted nothing from a year of history: %+v", res.Prune)
	}
	for _, tc := range res.Prune.Tables {
		if tc.Table == "sends" && (tc.After >= tc.Before || tc.After == 0) {
			t.Errorf("sends %d -> %d: want the old ones gone and the last 90 days kept", tc.Before, tc.After)
		}
	}
	// Postgres's CPU is summed over its live backends, so on this shared
	// test server another test's backend that exits between two samples
	// takes its CPU with it and a figure can come out negative (seen under
	// CI's stress run): then no ratio is the right answer. Positive
	// figures must give one.
	if pr := res.Rounds[1]; postgresRunsHere() {
		if pr.FreshEmailUS == 0 && pr.HistoryEmailUS == 0 {
			t.Errorf("the pruned round sampled no postgres CPU: %+v", pr)
		}
		if _, ok := res.Email["pruned"]; !ok && pr.FreshEmailUS > 0 && pr.HistoryEmailUS > 0 {
			t.Errorf("no pruned email ratio from positive figures: %+v", res)
		}
	}
	if n := schemas(t, db); n != 0 {
		t.Fatalf("%d scratch schemas left behind", n)
	}
}
