package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
)

// Issue 26, item 3: however hot an enrich tick runs (25 calls in flight
// over two workspaces, no bucket), it keeps at most
// store.BackgroundMaxConnsDefault connections to the database it shares
// with email, each named "rindactl enrich" for pg_stat_activity.
func TestEnrichTickKeepsItsConnectionsBounded(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	importAcceptanceLeads(t, a.env, "acme", "conn", 150)
	importAcceptanceLeads(t, a.env, "globex", "conn", 150)
	a.set.Hunter.SetLatency(5 * time.Millisecond)
	a.tickEnv["RINDA_HUNTER_RATE"] = "off"

	ctx, stop := context.WithCancel(context.Background())
	var most atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for ctx.Err() == nil {
			var n int64
			if err := a.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name = 'rindactl enrich'`).Scan(&n); err == nil && n > most.Load() {
				most.Store(n)
			}
		}
	}()
	rep := runEnrichTick(t, a.tickEnv, "--providers", "hunter", "--concurrency", "25", "--nice", "0")
	stop()
	<-sampled
	if rep.Calls["hunter"] != 300 {
		t.Fatalf("calls %v, want every lead asked of hunter", rep.Calls)
	}
	if n := most.Load(); n < 1 || n > int64(store.BackgroundMaxConnsDefault) {
		t.Errorf("the tick held up to %d connections named 'rindactl enrich', want 1 to %d", n, store.BackgroundMaxConnsDefault)
	}
}
