package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
)

// workspaceCalls reads `workspace list --output json` for one workspace.
func workspaceCalls(t *testing.T, env map[string]string, name string) (made, billed int64) {
	t.Helper()
	res := runCLI(t, env, "workspace", "list", "--output", "json")
	var wl struct {
		Workspaces []struct {
			Name   string `json:"name"`
			Made   *int64 `json:"month_calls_made"`
			Billed *int64 `json:"month_calls_billed"`
		} `json:"workspaces"`
	}
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &wl) != nil {
		t.Fatalf("workspace list: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, w := range wl.Workspaces {
		if w.Name == name {
			if w.Made == nil || w.Billed == nil {
				t.Fatalf("workspace list shows no month_calls_made and month_calls_billed: %s", res.stdout)
			}
			return *w.Made, *w.Billed
		}
	}
	t.Fatalf("workspace %s not listed: %s", name, res.stdout)
	return 0, 0
}

// Issue 24: a paid result is never thrown away. Findymail finds the
// addresses while MillionVerifier is out of credits: each find is billed
// once and kept with its lead as "verify pending". When the verifier is
// back, the operator does what docs/operations.md says (reset its breaker,
// requeue its unreachable leads) and one tick verifies the kept addresses:
// every lead went to Findymail exactly once and is enriched. `workspace
// list` shows the calls made apart from the calls billed.
func TestAcceptanceVerifierOutOfCreditsKeepsPaidFinds(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	db, set, env, tickEnv := a.db, a.set, a.env, a.tickEnv
	ctx := context.Background()
	const n = 30
	leads := importAcceptanceLeads(t, env, "acme", "paid", n)
	misses := expectedMisses(leads)
	found := n - misses
	set.MillionVerifier.SetMode(providertest.ModeQuotaExhausted)

	rep := runEnrichTick(t, tickEnv, "--providers", "findymail", "--verify", "millionverifier")
	if rep.Calls["findymail"] != n || rep.Calls["millionverifier"] != 1 {
		t.Fatalf("first tick calls %v: want each lead asked of findymail once and one verifier call (its quota answer)", rep.Calls)
	}
	if rep.Outcomes["unreachable"] != found || rep.Outcomes["not_found"] != misses {
		t.Fatalf("first tick outcomes %v: want the %d found addresses waiting for the verifier, %d not found", rep.Outcomes, found, misses)
	}
	var held int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM lead_enrichment WHERE found_email IS NOT NULL AND found_by = 'findymail'`).Scan(&held); err != nil || held != found {
		t.Fatalf("%d addresses kept with their source (%v), want every paid find (%d)", held, err, found)
	}
	// Every call made is in the ledger once; only the finds are billed
	// (Findymail bills found addresses; the verifier's quota answer is not).
	if made, billed := workspaceCalls(t, env, "acme"); made != int64(n+1) || billed != int64(found) {
		t.Errorf("workspace list: %d calls made, %d billed; want %d made and %d billed", made, billed, n+1, found)
	}

	// The verifier is back: reset its breaker and requeue as the docs say.
	set.MillionVerifier.SetMode(providertest.ModeHealthy)
	if res := runCLI(t, env, "breaker", "reset", "--workspace", "acme", "--provider", "millionverifier"); res.code != exitOK {
		t.Fatalf("breaker reset: %+v", res)
	}
	res := runCLI(t, env, "requeue", "--status=unreachable", "--provider", "millionverifier", "--yes", "--output", "json")
	var moved requeueReport
	if res.code != exitOK || json.Unmarshal([]byte(res.stdout), &moved) != nil || moved.Moved != int64(found) {
		t.Fatalf("requeue: exit %d %+v\n%s", res.code, moved, res.stderr)
	}
	rep = runEnrichTick(t, tickEnv, "--providers", "findymail", "--verify", "millionverifier")
	if rep.Calls["findymail"] != 0 || rep.Calls["millionverifier"] != found || rep.Outcomes["enriched"] != found {
		t.Fatalf("after recovery: %+v; want the %d kept addresses verified and enriched, findymail not asked", rep, found)
	}
	for lead, k := range perLeadRequests(set.Findymail.Requests()) {
		if k != 1 {
			t.Errorf("%s was sent to findymail %d times, want once", lead, k)
		}
	}
	if got := leadStatusCounts(t, db, ""); got["enriched"] != found || got["not_found"] != misses || len(got) != 2 {
		t.Errorf("leads %v, want enriched=%d not_found=%d", got, found, misses)
	}
	var twice int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT lead_id, provider FROM provider_calls
		WHERE state = 'settled' AND outcome = 'found' GROUP BY 1, 2 HAVING count(*) > 1) d`).Scan(&twice); err != nil || twice != 0 {
		t.Errorf("%d (lead, provider) pairs billed for a find twice (%v), want 0", twice, err)
	}
	if made, billed := workspaceCalls(t, env, "acme"); made != int64(n+1+found) || billed != int64(2*found) {
		t.Errorf("workspace list: %d made, %d billed; want %d made and %d billed (the verifier bills every verdict)", made, billed, n+1+found, 2*found)
	}
}

// perLeadRequests counts a stand-in's requests per lead name.
func perLeadRequests(reqs []providertest.Request) map[string]int {
	m := map[string]int{}
	for _, r := range reqs {
		m[r.FirstName+" "+r.LastName+"@"+r.Domain]++
	}
	return m
}
