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

// ScanCounter counts the rows sequential scans read from tables while a
// tick runs on statistics taken at its start (see SeqScanReads).
type ScanCounter struct {
	admin *pgxpool.Pool
	// Pool is for the work whose reads are counted; SeqScanReads closes it.
	Pool *pgxpool.Pool
}

// CountSeqScans analyzes every table of admin's database as it is now,
// resets its statistics and opens a pool on url for the work to count.
func CountSeqScans(t testing.TB, admin *pgxpool.Pool, url string) *ScanCounter {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{`ANALYZE`, `SELECT pg_stat_reset()`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	pool, err := store.Open(ctx, store.Config{URL: url, MaxConns: 10, ApplicationName: scanCountApp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &ScanCounter{admin: admin, Pool: pool}
}

// SeqScanReads closes the counted pool, waits until its backends have
// exited (a backend reports its table statistics at the latest then) and
// returns the rows sequential scans read from each table since
// CountSeqScans, by anyone.
func (c *ScanCounter) SeqScanReads(t testing.TB, tables ...string) map[string]int {
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
	read := map[string]int{}
	for _, table := range tables {
		var n int
		if err := c.admin.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		read[table] = n
	}
	return read
}
