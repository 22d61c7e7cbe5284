package reliability

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// withApplicationName names a URL's connections, so the test can find and
// cut exactly the tick's backends.
func withApplicationName(t testing.TB, raw, name string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// errorLines are the stderr lines that are not JSON log records: what an
// operator reads.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l != "" && !strings.HasPrefix(l, "{") {
			out = append(out, l)
		}
	}
	return out
}

// TestEnrichTickLosesItsDatabase cuts every connection of a running enrich
// tick (pg_terminate_backend, as a failover or restart does) until it
// exits, and checks
// that the tick exits non-zero with one clear line, that the next tick
// completes, and that no lead stays claimed past its lease.
func TestEnrichTickLosesItsDatabase(t *testing.T) {
	t.Parallel()
	for i := range iterations(1, 5) {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			t.Parallel()
			db := storetest.New(t)
			hunter := providertest.NewHunter()
			t.Cleanup(hunter.Close)
			hunter.SetLatency(100 * time.Millisecond)
			if res := rindactl(t, map[string]string{"DATABASE_URL": db.URL}, "import", "leads", "--workspace", "acme",
				writeFile(t, "leads.csv", leadsCSV("d", 40, 0))); res.code != 0 {
				t.Fatalf("import: %s", res)
			}
			backdate(t, db)
			app := "rel-dbloss-" + strings.ToLower(rand.Text()[:8])
			env := map[string]string{"DATABASE_URL": withApplicationName(t, db.TickURL(), app), "RINDA_HUNTER_TIMEOUT": "500ms"}
			for k, v := range hunter.Env("k") {
				env[k] = v
			}
			args := []string{"enrich", "tick", "--providers", "hunter", "--batch", "10", "--concurrency", "2", "--lease", "3s", "--max-duration", "2s"}

			var g errgroup.Group
			var cut result
			exited := make(chan struct{})
			g.Go(func() error { cut = rindactl(t, env, args...); close(exited); return nil })
			// Once the tick holds leads, cut its connections, reconnects
			// included, until it exits: the database is gone for the rest
			// of its run. (Cut for a while only, a tick may recover: its
			// settles retry, and its outcome writes may all fall after the
			// cut, as they did on a loaded machine.)
			deadline := time.Now().Add(10 * time.Second)
			for queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE status = 'in_progress'`) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the tick never claimed a lead")
				}
				time.Sleep(10 * time.Millisecond)
			}
			terminated := 0
		cutting:
			for {
				terminated += queryInt(t, db, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) x`, app)
				select {
				case <-exited:
					break cutting
				case <-time.After(15 * time.Millisecond):
				}
			}
			g.Wait()
			if terminated == 0 {
				t.Fatal("no backend of the tick was found to terminate")
			}
			lines := errorLines(cut.stderr)
			if cut.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "rindactl: ") {
				t.Errorf("a tick that lost its database should exit 1 with one error line, got %s", cut)
			}
			t.Logf("the line an operator reads: %s", strings.Join(lines, " | "))

			var wait time.Duration
			if err := db.Pool.QueryRow(context.Background(), `SELECT coalesce(max(locked_until) - now(), '0') FROM lead_enrichment WHERE status = 'in_progress'`).Scan(&wait); err != nil {
				t.Fatal(err)
			}
			if wait > 3*time.Second+time.Second {
				t.Errorf("leads are claimed for %s, past the 3s lease", wait)
			}
			time.Sleep(wait + 50*time.Millisecond)
			recoverEnrichment(t, db, env, args)
			// A lead whose call's answer the cut lost (admitted, maybe
			// billed, never settled) is doubted and ends enrichment_failed
			// for an operator, never bought twice (issue 24): settled too.
			if bad := queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE NOT (status IN ('enriched', 'not_found', 'unreachable')
				OR status = 'pending' AND next_attempt_at > now()
				OR status = 'enrichment_failed' AND doubted_by <> '{}')`); bad != 0 {
				t.Errorf("%d leads not settled after the recovery tick: %v", bad, statusCounts(t, db))
			}
			if i == 0 {
				figure(t, "dbloss_error_line", lines)
			}
		})
	}
}

// TestEveryConnectionCarriesTimeouts opens the pool every command uses, as
// the tick role, takes all its connections at once and asks each for its
// timeouts.
func TestEveryConnectionCarriesTimeouts(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	pool, err := store.Open(ctx, store.Config{URL: db.TickURL(), MaxConns: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for i := range 6 {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		var stmt, lock, jit string
		if err := conn.QueryRow(ctx, `SELECT current_setting('statement_timeout'), current_setting('lock_timeout'), current_setting('jit')`).Scan(&stmt, &lock, &jit); err != nil {
			t.Fatal(err)
		}
		if stmt != store.StatementTimeoutDefault.String() || lock != store.LockTimeoutDefault.String() {
			t.Errorf("connection %d: statement_timeout %s, lock_timeout %s; want %s and %s", i, stmt, lock, store.StatementTimeoutDefault, store.LockTimeoutDefault)
		}
		// Every statement is short and reaches its rows by key: JIT's
		// compile (100-200 ms) never pays, and a big table's cost
		// estimate in a branch never run (status's spend fallback over
		// the ledger) was enough to trigger it.
		if jit != "off" {
			t.Errorf("connection %d: jit %s, want off", i, jit)
		}
	}
}

// TestTickGivesUpOnALockedTable holds a lock a tick needs and checks that
// the tick gives up after lock_timeout with one clear line instead of
// hanging until cron piles up copies of it.
func TestTickGivesUpOnALockedTable(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	if res := rindactl(t, map[string]string{"DATABASE_URL": db.URL}, "import", "leads", "--workspace", "acme",
		writeFile(t, "leads.csv", leadsCSV("l", 3, 0))); res.code != 0 {
		t.Fatalf("import: %s", res)
	}
	backdate(t, db)
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE lead_enrichment IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	hunter := providertest.NewHunter()
	t.Cleanup(hunter.Close)
	env := hunter.Env("k")
	env["DATABASE_URL"] = db.TickURL()
	res := rindactl(t, env, "enrich", "tick", "--providers", "hunter")
	lines := errorLines(res.stderr)
	if res.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "lock") {
		t.Errorf("a tick blocked by a lock should exit 1 with one line about the lock, got %s", res)
	}
	if hunter.Count() != 0 {
		t.Errorf("the blocked tick called the provider %d times", hunter.Count())
	}
	figure(t, "lock_timeout_error_line", lines)
}
