package main

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/enrich/provider/providertest"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestEnrichTickJSONOutput(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	set := providertest.StartAll()
	defer set.Close()
	env := set.Env()
	env["DATABASE_URL"] = db.URL

	file := writeCSV(t, "first_name,last_name,company_domain\nAda,Lovelace,analytical.example\nAlan,Turing,bletchley.example\n")
	if res := runCLI(t, env, "import", "leads", "--workspace", "acme", file); res.code != exitOK {
		t.Fatalf("import: %s", res.stderr)
	}
	set.Findymail.SetMode(providertest.ModeQuotaExhausted)

	res := runCLI(t, env, "enrich", "tick", "--workspace", "acme", "--verify", "millionverifier", "--output", "json")
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, res.stdout)
	}
	keys := strings.Join(slices.Sorted(maps.Keys(doc)), ",")
	if keys != "claimed,duration_ms,outcomes,provider_calls,rate_wait_ms,tick_id" {
		t.Fatalf("top-level keys %s", keys)
	}
	var outcomes, calls map[string]int
	_ = json.Unmarshal(doc["outcomes"], &outcomes)
	_ = json.Unmarshal(doc["provider_calls"], &calls)
	if strings.Join(slices.Sorted(maps.Keys(outcomes)), ",") != "enriched,enrichment_failed,not_found,pending,unreachable" {
		t.Fatalf("outcome keys %v", outcomes)
	}
	if calls["findymail"] != 1 || calls["hunter"] != 2 || calls["millionverifier"] != calls["hunter"]-outcomes["unreachable"] {
		t.Fatalf("provider calls %v (outcomes %v)", calls, outcomes)
	}
	for _, line := range strings.Split(strings.TrimSpace(res.stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
	}
	if !strings.Contains(res.stderr, `"component":"tick"`) || !strings.Contains(res.stderr, "enrich tick finished") ||
		strings.Contains(res.stderr, providertest.KeyDefault) {
		t.Fatalf("logs lack the tick's lines or leak the key:\n%s", res.stderr)
	}
	// The adapter's line is emitted in production too (issue 14).
	if !strings.Contains(res.stderr, `"component":"adapter","provider":"findymail","endpoint":"/api/search/name"`) {
		t.Fatalf("logs lack the adapter's line for Findymail's quota answer:\n%s", res.stderr)
	}
}

// --workspace resolves through the one workspace lookup the operator
// commands share; a name that matches none is a usage error naming the fix.
func TestEnrichTickUnknownWorkspace(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	res := runCLI(t, map[string]string{"DATABASE_URL": db.URL}, "enrich", "tick", "--workspace", "nope")
	want := `--workspace: unknown workspace "nope" (list them with 'rindactl workspace list')`
	if res.code != exitUsage || !strings.Contains(res.stderr, want) {
		t.Fatalf("exit %d stderr %q; want %d with %q", res.code, res.stderr, exitUsage, want)
	}
}

func TestEnrichTickUsageErrors(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"unknown finder":     {"enrich", "tick", "--providers", "clearbit"},
		"verifier as finder": {"enrich", "tick", "--providers", "millionverifier"},
		"lease too short":    {"enrich", "tick", "--lease", "10s", "--max-duration", "50s"},
		"bad timeout":        {"enrich", "tick", "--providers", "hunter"},
		"twice":              {"enrich", "tick", "--providers", "hunter,hunter"},
		"bad output":         {"enrich", "tick", "--output", "yaml"},
		"bad in-doubt retry": {"enrich", "tick", "--providers", "hunter"},
	}
	for name, args := range cases {
		env := map[string]string{}
		switch name {
		case "bad timeout":
			env["RINDA_HUNTER_TIMEOUT"] = "soon"
		case "bad in-doubt retry":
			env["RINDA_IN_DOUBT_RETRY_AFTER"] = "-1h"
		}
		res := runCLI(t, env, args...)
		if res.code != exitUsage || lines(res.stderr) == 0 {
			t.Errorf("%s: exit %d stderr %q, want 2 with a message", name, res.code, res.stderr)
		}
	}
}

// Issue 14: --lease 2s --max-duration 1s let a second tick re-claim a lead
// whose call to a stalled provider was still running. The lease must cover
// the tick's duration plus the provider HTTP timeout, after which the tick
// cuts the call.
func TestEnrichTickLeaseCoversMaxDurationAndHTTPTimeout(t *testing.T) {
	t.Parallel()
	res := runCLI(t, map[string]string{}, "enrich", "tick", "--lease", "2s", "--max-duration", "1s")
	want := "--lease 2s must exceed --max-duration 1s plus the provider HTTP timeout 20s"
	if res.code != exitUsage || lines(res.stderr) != 1 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "use --lease 22s or more") {
		t.Fatalf("exit %d stderr %q; want 2 and one line saying %q and the lease to use", res.code, res.stderr, want)
	}
	// A shorter provider timeout makes the same lease valid: the check
	// passes and the tick goes on to the database (none here: exit 1).
	env := map[string]string{"RINDA_HUNTER_TIMEOUT": "500ms", "DATABASE_URL": "postgres://127.0.0.1:1/none?connect_timeout=1"}
	if res := runCLI(t, env, "enrich", "tick", "--providers", "hunter", "--lease", "2s", "--max-duration", "1s"); res.code != exitError {
		t.Fatalf("exit %d stderr %q; want the lease accepted and the missing database reported (1)", res.code, res.stderr)
	}
	// Without --lease, a long --max-duration (a 5-minute schedule's 290s)
	// gets a lease to match instead of a usage error.
	delete(env, "RINDA_HUNTER_TIMEOUT")
	if res := runCLI(t, env, "enrich", "tick", "--max-duration", "290s"); res.code != exitError {
		t.Fatalf("exit %d stderr %q; want the default lease grown past 290s + 20s", res.code, res.stderr)
	}
}
