package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// killSeed fixes the kill moments, so a failing run can be replayed.
const killSeed = 20261202

// runKills runs kill n times in parallel subtests of a "kills" group, each
// at a moment drawn from [0, window) by the seeded stream, and returns
// their results in order.
func runKills[R any](t *testing.T, n int, stream uint64, window time.Duration, kill func(*testing.T, time.Duration) R) []R {
	rng := rand.New(rand.NewPCG(killSeed, stream))
	results := make([]R, n)
	t.Run("kills", func(t *testing.T) {
		for i := range n {
			delay := time.Duration(rng.Int64N(int64(window)))
			t.Run(fmt.Sprintf("%03d_at_%dms", i, delay.Milliseconds()), func(t *testing.T) {
				t.Parallel()
				results[i] = kill(t, delay)
			})
		}
	})
	return results
}

// killAfter starts rindactl with args, SIGKILLs it after delay, reaps it
// and ends its database sessions. A statement the process had sent runs on
// in its backend after the kill and commits (a claim taking a batch with
// a fresh lease, after the test has looked at what the kill left): a pgx
// client killed during a 1 s UPDATE still had it committed, 2 runs of 2.
func killAfter(t *testing.T, db *storetest.DB, env map[string]string, args []string, delay time.Duration) {
	t.Helper()
	killWhen(t, db, env, args, func() { time.Sleep(delay) })
}

// killWhen is killAfter with the kill's moment set by wait returning.
func killWhen(t *testing.T, db *storetest.DB, env map[string]string, args []string, wait func()) {
	t.Helper()
	cmd := command(context.Background(), env, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wait()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	// The tick role's sessions in this test's database are the killed
	// process's alone.
	sqlExec(t, db, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND usename = $1`, storetest.TickRole)
	testkit.Eventually(t, "the killed tick's database sessions to end", func() bool {
		return queryInt(t, db, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND usename = $1`, storetest.TickRole) == 0
	})
}

// Shape of one enrich kill: killEnrichLeads leads through a Hunter stand-in
// answering in killEnrichLatency, killEnrichConcurrency at a time, paced by
// the default Hunter bucket (8/s, burst 7): a few seconds of work, whose
// first second the kill lands in.
const (
	killEnrichLeads       = 40
	killEnrichConcurrency = 4
	killEnrichLatency     = 100 * time.Millisecond
	// killHTTPTimeout is only a hang guard: a call that timed out is
	// retried, which a loaded machine must not turn into a second call
	// (a 400 ms timeout against the 100 ms stand-in did at load 22).
	killHTTPTimeout = 30 * time.Second
	// killLease covers --max-duration 1500ms plus the timeout, as the
	// --lease check requires; the test expires it in the database after
	// the kill rather than waiting it out.
	killLease = killHTTPTimeout + 5*time.Second
)

// enrichKill is what one kill left behind.
type enrichKill struct {
	delay      time.Duration
	inFlight   int // leads claimed and called but not recorded at the kill
	duplicates int // leads that reached the provider twice
	inDoubt    int // leads whose call's answer the kill lost: not sent again
}

// TestEnrichTickSurvivesSIGKILL kills an enrich tick at a seeded random
// moment, runs recovery ticks after the lease, and checks that every lead
// ends in a known state and that only leads in flight at the kill were
// sent to the provider twice.
func TestEnrichTickSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	n := iterations(5, 100)
	results := runKills(t, n, 1, 1100*time.Millisecond, killEnrichOnce)
	maxDup, total, inFlight, over, inDoubt := 0, 0, 0, 0, 0
	for _, r := range results {
		inDoubt += r.inDoubt
		maxDup = max(maxDup, r.duplicates)
		total += r.duplicates
		inFlight += r.inFlight
		if r.duplicates > killEnrichConcurrency {
			over++
		}
	}
	t.Logf("%d kills: %d duplicate provider calls (max %d per kill, --concurrency %d), %d leads in flight at the kills, %d of them in doubt", n, total, maxDup, killEnrichConcurrency, inFlight, inDoubt)
	figure(t, "enrich_kills", n)
	figure(t, "enrich_kill_leads_lost", 0) // any loss fails the test above
	figure(t, "enrich_kill_duplicate_calls", total)
	figure(t, "enrich_kill_max_duplicates_per_kill", maxDup)
	figure(t, "enrich_kill_kills_over_concurrency", over)
	figure(t, "enrich_kill_in_flight_at_kill", inFlight)
	figure(t, "enrich_kill_leads_in_doubt", inDoubt)
}

func killEnrichOnce(t *testing.T, delay time.Duration) enrichKill {
	db := storetest.New(t)
	hunter := providertest.NewHunter()
	t.Cleanup(hunter.Close)
	hunter.SetLatency(killEnrichLatency)
	env := map[string]string{"DATABASE_URL": db.URL}
	if res := rindactl(t, env, "import", "leads", "--workspace", "acme", writeFile(t, "leads.csv", leadsCSV("k", killEnrichLeads, 0))); res.code != 0 {
		t.Fatalf("import: %s", res)
	}
	backdate(t, db)

	tickEnv := map[string]string{"DATABASE_URL": db.TickURL()}
	for k, v := range hunter.Env("k") {
		tickEnv[k] = v
	}
	// The shipped buckets pace the work (a few seconds).
	tickEnv["RINDA_HUNTER_TIMEOUT"] = killHTTPTimeout.String()
	args := []string{"enrich", "tick", "--providers", "hunter", "--batch", "10",
		"--concurrency", fmt.Sprint(killEnrichConcurrency), "--lease", killLease.String(), "--max-duration", "1500ms"}
	killAfter(t, db, tickEnv, args, delay)
	killedAt := time.Now()
	before := perLead(hunter.Requests())

	// What the kill left: leads still claimed, and their lease.
	inProgress := map[string]bool{}
	rows, err := db.Pool.Query(context.Background(), `SELECT l.first_name || ' ' || l.last_name || '@' || l.company_domain,
		e.locked_until FROM lead_enrichment e JOIN leads l ON l.id = e.lead_id WHERE e.status = 'in_progress'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var lead string
		var until time.Time
		if err := rows.Scan(&lead, &until); err != nil {
			t.Fatal(err)
		}
		inProgress[lead] = true
		if until.After(killedAt.Add(killLease + time.Second)) {
			t.Errorf("lead %s is leased until %s, past the %s lease", lead, until, killLease)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The killed tick is reaped: its leases running out is all that
	// waiting for them would bring.
	sqlExec(t, db, `UPDATE lead_enrichment SET locked_until = now() - interval '1 second',
		next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second'
		WHERE status = 'in_progress'`)

	recoverEnrichment(t, db, tickEnv, args)
	after := perLead(hunter.Requests())

	// Nothing lost, nothing stuck: every lead in a known end state.
	if got := queryInt(t, db, `SELECT count(*) FROM lead_enrichment`); got != killEnrichLeads {
		t.Errorf("%d enrichment rows, want %d", got, killEnrichLeads)
	}
	// A lead whose call the kill left admitted and unsettled is in doubt
	// (issue 24): Hunter may have billed the answer the kill lost, so it is
	// not asked again, and the lead waits for an operator.
	if bad := queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE NOT (status IN ('enriched', 'not_found', 'unreachable')
		OR status = 'pending' AND next_attempt_at > now() OR status = 'enrichment_failed' AND doubted_by = '{hunter}')`); bad != 0 {
		t.Errorf("%d leads are neither enriched, not_found, unreachable, pending with a future due time nor in doubt: %v", bad, statusCounts(t, db))
	}
	doubted := storetest.Column[string](t, db.Pool, `SELECT l.first_name || ' ' || l.last_name || '@' || l.company_domain
		FROM lead_enrichment e JOIN leads l ON l.id = e.lead_id WHERE e.doubted_by <> '{}'`)
	for _, lead := range doubted {
		if !inProgress[lead] {
			t.Errorf("lead %s is in doubt but was not claimed at the kill", lead)
		}
	}

	k := enrichKill{delay: delay, inDoubt: len(doubted)}
	for lead := range inProgress {
		if before[lead] > 0 {
			k.inFlight++
		}
	}
	for lead, calls := range after {
		if calls < 2 {
			continue
		}
		k.duplicates++
		if calls > 2 || !inProgress[lead] || before[lead] != 1 || slices.Contains(doubted, lead) {
			t.Errorf("lead %s reached the provider %d times (%d before the kill, in progress at the kill: %v)", lead, calls, before[lead], inProgress[lead])
		}
	}
	// Every duplicate is checked above to be in flight at the kill: called
	// and not yet recorded, i.e. a call under way (at most --concurrency)
	// or an answer waiting for the next grouped flush. The figures report
	// how often the first term alone was exceeded.
	return k
}

// recoverEnrichment runs ticks until no lead is claimed or due soon. A
// lead whose rate slot fell just past a tick's deadline is pending and due a
// moment later (the buckets pace the ticks): recovery waits for it, as the
// next cron tick would.
func recoverEnrichment(t *testing.T, db *storetest.DB, env map[string]string, args []string) {
	t.Helper()
	const soon = "5 seconds"
	var last result
	for range 20 {
		if queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE status IN ('pending', 'in_progress', 'unreachable') AND next_attempt_at <= now() + interval '`+soon+`'`) == 0 &&
			queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE status = 'in_progress'`) == 0 {
			return
		}
		var wait time.Duration
		if err := db.Pool.QueryRow(context.Background(), `SELECT coalesce(greatest(min(next_attempt_at) - now(), '0'), '0')
			FROM lead_enrichment WHERE status IN ('pending', 'in_progress', 'unreachable') AND next_attempt_at <= now() + interval '`+soon+`'`).Scan(&wait); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
		if last = rindactl(t, env, args...); last.code != 0 {
			t.Fatalf("recovery tick: %s", last)
		}
	}
	// Seen once under make test-stress (10 leads left in_progress): who
	// holds them, for how long, and what the last recovery tick said.
	held := storetest.Column[string](t, db.Pool, `SELECT coalesce(locked_by, '-') || ' until now+' || (locked_until - now())::text || ', attempts ' || attempts
		FROM lead_enrichment WHERE status = 'in_progress' ORDER BY lead_id`)
	t.Fatalf("leads still due or claimed after 20 recovery ticks: %v; in_progress: %v; last recovery tick: %s", statusCounts(t, db), held, last)
}

func statusCounts(t testing.TB, db *storetest.DB) map[string]int {
	t.Helper()
	rows, _ := db.Pool.Query(context.Background(), `SELECT status, count(*)::int FROM lead_enrichment GROUP BY status`)
	m, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		s string
		n int
	}, error) {
		var v struct {
			s string
			n int
		}
		return v, r.Scan(&v.s, &v.n)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, v := range m {
		out[v.s] = v.n
	}
	return out
}

// perLead counts a stand-in's requests per lead (first last@domain).
func perLead(reqs []providertest.Request) map[string]int {
	m := map[string]int{}
	for _, r := range reqs {
		m[r.FirstName+" "+r.LastName+"@"+strings.ToLower(r.Domain)]++
	}
	return m
}

// Issue 39: in-doubt recovers by itself. A SIGKILL with calls in flight
// leaves their leads in doubt (Hunter may have billed the answers the kill
// lost); with RINDA_IN_DOUBT_RETRY_AFTER=1s the recovery ticks ask Hunter
// again a second later, each such call marked a possible second charge in
// the ledger. Every lead ends enriched, none asked more than twice, and
// the second asks are at most the calls in flight at the kill. Before,
// the leads in doubt ended enrichment_failed until `requeue --refind`.
func TestEnrichKillInDoubtRecoversByItself(t *testing.T) {
	t.Parallel()
	const leads, concurrency = 400, 10
	db := storetest.New(t)
	hunter := providertest.NewHunter()
	t.Cleanup(hunter.Close)
	hunter.SetLatency(killEnrichLatency)
	// Every lead has an address: what is not enriched was lost.
	hunter.SetDirectory(func(first, last, domain string) (string, bool) {
		return strings.ToLower(first) + "@" + strings.ToLower(domain), true
	})
	env := map[string]string{"DATABASE_URL": db.URL}
	if res := rindactl(t, env, "import", "leads", "--workspace", "acme", writeFile(t, "leads.csv", leadsCSV("d", leads, 0))); res.code != 0 {
		t.Fatalf("import: %s", res)
	}
	backdate(t, db)
	tickEnv := map[string]string{"DATABASE_URL": db.TickURL(), "RINDA_IN_DOUBT_RETRY_AFTER": "1s",
		"RINDA_HUNTER_TIMEOUT": killHTTPTimeout.String(), "RINDA_HUNTER_RATE": "off"}
	for k, v := range hunter.Env("d") {
		tickEnv[k] = v
	}
	// --max-duration long enough that the kill lands mid-tick however
	// loaded the machine (a 3 s tick ended before 100 calls under CI's
	// stress runs), and a lease that covers it plus the call timeout.
	args := []string{"enrich", "tick", "--providers", "hunter", "--batch", "50", "--concurrency", fmt.Sprint(concurrency),
		"--lease", (killHTTPTimeout + time.Minute).String(), "--max-duration", "30s", "--nice", "0"}
	// Mid-tick: a hundred answers in, calls in flight.
	killWhen(t, db, tickEnv, args, func() {
		testkit.Eventually(t, "100 Hunter calls", func() bool { return hunter.Count() >= 100 })
	})
	before := perLead(hunter.Requests())
	inFlight := queryInt(t, db, `SELECT count(*) FROM lead_enrichment WHERE status = 'in_progress'`)
	sqlExec(t, db, `UPDATE lead_enrichment SET locked_until = now() - interval '1 second',
		next_attempt_at = now() - interval '1 second', updated_at = now() - interval '1 second'
		WHERE status = 'in_progress'`)

	// Recovery ticks end as soon as their work is: short ones.
	recovery := slices.Clone(args)
	recovery[slices.Index(recovery, "--max-duration")+1] = "3s"
	recoverEnrichment(t, db, tickEnv, recovery)

	if got := statusCounts(t, db); got["enriched"] != leads {
		t.Errorf("leads %v, want all %d enriched", got, leads)
	}
	after := perLead(hunter.Requests())
	twice := 0
	for lead, n := range after {
		if n > 2 || n == 2 && before[lead] != 1 {
			t.Errorf("lead %s asked %d times (%d before the kill)", lead, n, before[lead])
		}
		if n == 2 {
			twice++
		}
	}
	second := queryInt(t, db, `SELECT count(*) FROM provider_calls WHERE second_charge AND state = 'settled'`)
	doubtedCalls := queryInt(t, db, `SELECT count(*) FROM provider_calls WHERE outcome = 'in_doubt'`)
	// At most --concurrency calls were in flight at the kill. Each call in
	// doubt is asked again as a possible second charge; on a loaded
	// machine some of them had not reached Hunter when the kill landed
	// (a CI stress run: 8 in doubt, 1 seen twice), so a lead Hunter saw
	// twice is one of them, never more.
	if twice > concurrency || second != doubtedCalls || twice > second {
		t.Errorf("%d leads asked twice, %d second charges in the ledger, %d calls in doubt (%d leads claimed at the kill, --concurrency %d): want every second ask marked a second charge, one per call in doubt, within the calls in flight",
			twice, second, doubtedCalls, inFlight, concurrency)
	}
	t.Logf("kill with %d leads claimed: %d calls in doubt, %d leads asked twice", inFlight, doubtedCalls, twice)
}
