package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// acceptanceLead is one generated lead of an acceptance scenario.
type acceptanceLead struct{ first, last, domain string }

// importAcceptanceLeads imports n leads named after prefix into workspace
// through the CLI and returns them, so a test can predict the stand-in's
// deterministic misses with providertest.IsDefaultMiss.
func importAcceptanceLeads(t *testing.T, env map[string]string, workspace, prefix string, n int) []acceptanceLead {
	t.Helper()
	var b strings.Builder
	b.WriteString("external_id,first_name,last_name,company_domain\n")
	leads := make([]acceptanceLead, n)
	for i := range leads {
		leads[i] = acceptanceLead{fmt.Sprintf("Ann%d", i), fmt.Sprintf("%sLee%d", prefix, i), fmt.Sprintf("co%d.example", i%7)}
		fmt.Fprintf(&b, "%s-%d,%s,%s,%s\n", prefix, i, leads[i].first, leads[i].last, leads[i].domain)
	}
	if res := runCLI(t, env, "import", "leads", "--workspace", workspace, writeCSV(t, b.String())); res.code != exitOK {
		t.Fatalf("import %s leads into %s: %+v", prefix, workspace, res)
	}
	return leads
}

// expectedMisses counts the leads the default directory misses.
func expectedMisses(leads []acceptanceLead) int {
	n := 0
	for _, l := range leads {
		if providertest.IsDefaultMiss(l.first, l.last, l.domain) {
			n++
		}
	}
	return n
}

// acceptance is one CLI scenario: a database, the provider stand-ins
// (closed when the test ends), and the environments that point the CLI at
// them. Ticks connect as the least-privilege tick role; operator commands
// as the owner. The providers' buckets are the shipped defaults: a tick
// works at their pace, so the outcome does not depend on timing.
type acceptance struct {
	db           *storetest.DB
	set          *providertest.Set
	env, tickEnv map[string]string
}

func newAcceptance(t *testing.T) acceptance {
	t.Helper()
	a := acceptance{db: storetest.New(t), set: providertest.StartAll()}
	t.Cleanup(a.set.Close)
	a.env = a.set.Env()
	a.env["DATABASE_URL"] = a.db.URL
	a.env["USER"] = "oncall"
	a.tickEnv = maps.Clone(a.env)
	a.tickEnv["DATABASE_URL"] = a.db.TickURL()
	return a
}

// leadStatusCounts reads lead_enrichment by status straight from the table,
// for one workspace or, with "", for all.
func leadStatusCounts(t *testing.T, db *storetest.DB, workspace string) map[string]int {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `SELECT e.status, count(*)
		FROM lead_enrichment e JOIN workspaces w ON w.id = e.workspace_id
		WHERE $1 = '' OR w.name = $1 GROUP BY e.status`, workspace)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		got[s] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

type enrichTickJSON struct {
	Claimed  int            `json:"claimed"`
	Outcomes map[string]int `json:"outcomes"`
	Calls    map[string]int `json:"provider_calls"`
}

func runEnrichTick(t *testing.T, env map[string]string, args ...string) enrichTickJSON {
	t.Helper()
	res := runCLI(t, env, append([]string{"enrich", "tick", "--output", "json"}, args...)...)
	var rep enrichTickJSON
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &rep) != nil {
		t.Fatalf("enrich tick %v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	return rep
}

// The issue 6 incident scenario, through the CLI only: both finders out of
// quota leave leads unreachable behind open breakers; status shows both;
// a dry-run requeue counts without touching; after the providers recover,
// breaker reset + requeue + one tick enriches every lead.
func TestAcceptanceQuotaIncidentRecovery(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set, env, tickEnv := a.db, a.set, a.env, a.tickEnv
	ctx := context.Background()

	const n = 40
	leads := importAcceptanceLeads(t, env, "acme", "inc", n)
	set.Findymail.SetMode(providertest.ModeQuotaExhausted)
	set.Hunter.SetMode(providertest.ModeQuotaExhausted)

	rep := runEnrichTick(t, tickEnv)
	if rep.Outcomes["unreachable"] == 0 || rep.Outcomes["enriched"] != 0 || rep.Outcomes["enrichment_failed"] != 0 {
		t.Fatalf("quota tick outcomes %v, want unreachable leads and nothing enriched or failed", rep.Outcomes)
	}
	// Slow start: each finder's first quota answer stops the tick calling it.
	if set.Findymail.Count() != 1 || set.Hunter.Count() != 1 {
		t.Errorf("finders called findymail=%d hunter=%d, want 1 each", set.Findymail.Count(), set.Hunter.Count())
	}
	unreachable := leadStatusCounts(t, db, "")["unreachable"]
	if unreachable != rep.Outcomes["unreachable"] {
		t.Fatalf("table holds %d unreachable, tick reported %d", unreachable, rep.Outcomes["unreachable"])
	}

	res := runCLI(t, env, "status", "--output", "json")
	var st struct {
		Enrich struct {
			ByStatus map[string]int `json:"by_status"`
		} `json:"enrich"`
		Breakers []struct{ Workspace, Provider, State string } `json:"breakers"`
	}
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &st) != nil {
		t.Fatalf("status: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if st.Enrich.ByStatus["unreachable"] != unreachable {
		t.Errorf("status by_status %v, want unreachable=%d", st.Enrich.ByStatus, unreachable)
	}
	open := map[string]bool{}
	for _, b := range st.Breakers {
		if b.Workspace == "acme" && b.State == "open" {
			open[b.Provider] = true
		}
	}
	if !open["findymail"] || !open["hunter"] {
		t.Errorf("status breakers %+v, want findymail and hunter open for acme", st.Breakers)
	}

	res = runCLI(t, env, "requeue", "--status=unreachable", "--dry-run", "--output", "json")
	var dry requeueReport
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &dry) != nil {
		t.Fatalf("requeue --dry-run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !dry.DryRun || dry.Matched != int64(unreachable) || dry.Moved != 0 {
		t.Errorf("dry run report %+v, want %d matched and none moved", dry, unreachable)
	}
	var audits int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM audit_log").Scan(&audits); err != nil {
		t.Fatal(err)
	}
	if got := leadStatusCounts(t, db, "")["unreachable"]; got != unreachable || audits != 0 {
		t.Fatalf("dry run changed something: %d unreachable (want %d), %d audit rows", got, unreachable, audits)
	}

	set.Findymail.SetMode(providertest.ModeHealthy)
	set.Hunter.SetMode(providertest.ModeHealthy)
	for _, p := range []string{"findymail", "hunter"} {
		if res := runCLI(t, env, "breaker", "reset", "--workspace", "acme", "--provider", p); res.code != exitOK {
			t.Fatalf("breaker reset %s: %+v", p, res)
		}
	}
	res = runCLI(t, env, "requeue", "--status=unreachable", "--yes", "--output", "json")
	var moved requeueReport
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &moved) != nil || moved.Moved != int64(unreachable) {
		t.Fatalf("requeue --yes: exit %d %+v\n%s", res.code, moved, res.stderr)
	}

	rep = runEnrichTick(t, tickEnv)
	misses := expectedMisses(leads)
	got := leadStatusCounts(t, db, "")
	if got["enriched"] != n-misses || got["not_found"] != misses || len(got) != 2 {
		t.Fatalf("after recovery the leads are %v, want enriched=%d not_found=%d only (tick %+v)", got, n-misses, misses, rep)
	}
}
