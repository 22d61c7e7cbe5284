package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// scanCountApp names the pools whose sequential scans a test counts.
const scanCountApp = "seqscan-count"

// ScanCounter counts the rows sequential scans read from tables while work
// runs on its Pool (see SeqScanReads).
type ScanCounter struct {
	admin *pgxpool.Pool
	// Pool is for the work whose reads are counted; SeqScanReads closes it.
	Pool *pgxpool.Pool
}

// CountSeqScans analyzes every table of admin's database as it is now,
// resets its statistics and opens a pool on url for the work to count.
func CountSeqScans(t testing.TB, admin *pgxpool.Pool, url string) *ScanCounter {
	t.Helper()
	return countSeqScans(t, admin, url, 10, nil)
}

// CountStalePlanScans is CountSeqScans for work whose statements must keep
// reaching the given tables by key while those grow, whatever plan
// Postgres caches. Its pool is one connection, which plans each prepared
// statement once, at its first run, and keeps that plan (plan_cache_mode =
// force_generic_plan: the worst the plan cache can do), and autovacuum is
// off on the tables (an analyze would replan and hide a stale plan). A test
// runs a small warm-up on Pool (plans made on small tables), grows the
// tables by many rows, calls Reset, runs the work and reads SeqScanReads:
// a statement that scans a table per row, per group or per claim then
// reads the grown table each time, a number that depends on how often it
// runs, never on the machine's load, and dwarfs the one or two whole looks
// a run may take.
func CountStalePlanScans(t testing.TB, admin *pgxpool.Pool, url string, tables ...string) *ScanCounter {
	t.Helper()
	for _, table := range tables {
		if _, err := admin.Exec(context.Background(), `ALTER TABLE `+table+` SET (autovacuum_enabled = off)`); err != nil {
			t.Fatal(err)
		}
	}
	return countSeqScans(t, admin, url, 1, map[string]string{"plan_cache_mode": "force_generic_plan"})
}

func countSeqScans(t testing.TB, admin *pgxpool.Pool, url string, conns int32, params map[string]string) *ScanCounter {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{`ANALYZE`, `SELECT pg_stat_reset()`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := store.ParseConfig(store.Config{URL: url, MaxConns: conns, ApplicationName: scanCountApp})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &ScanCounter{admin: admin, Pool: pool}
}

// Reset zeroes the database's statistics: what ran before (a warm-up, the
// rows a test added) is not counted. The idle connections of both pools
// report what they read first: a backend reports its reads when it goes
// idle, but at most once a second, so reads made just before could land
// after the reset (they did: an enroll's five looks at enrollments).
func (c *ScanCounter) Reset(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	conns := append(c.Pool.AcquireAllIdle(ctx), c.admin.AcquireAllIdle(ctx)...)
	for _, conn := range conns {
		// Reported before the statement's answer (ReadyForQuery) is sent.
		_, err := conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
		conn.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.admin.Exec(ctx, `SELECT pg_stat_reset()`); err != nil {
		t.Fatal(err)
	}
}

// SeqScanReads closes the counted pool, waits until its backends have
// exited (a backend reports its table statistics at the latest then) and
// returns the rows sequential scans read from each table since
// CountSeqScans (or Reset), by anyone.
func (c *ScanCounter) SeqScanReads(t testing.TB, tables ...string) map[string]int {
	t.Helper()
	read := map[string]int{}
	for table, r := range c.Reads(t, tables...) {
		read[table] = r.Seq
	}
	return read
}

// Reads are the rows read from a table: by sequential scans, and fetched
// by index scans (a lookup by key fetches the few rows it names; a scan of
// a whole index, per row, fetches the table each time).
type Reads struct{ Seq, Index int }

// Reads is SeqScanReads with the rows index scans fetched.
func (c *ScanCounter) Reads(t testing.TB, tables ...string) map[string]Reads {
	t.Helper()
	ctx := context.Background()
	c.Pool.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var backends int
		if err := c.admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`, scanCountApp).Scan(&backends); err != nil {
			t.Fatal(err)
		}
		if backends == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("storetest: the counted pool's connections did not end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	read := map[string]Reads{}
	for _, table := range tables {
		var r Reads
		if err := c.admin.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0), coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&r.Seq, &r.Index); err != nil {
			t.Fatal(err)
		}
		read[table] = r
	}
	return read
}
