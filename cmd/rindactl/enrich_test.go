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
	if keys != "claimed,duration_ms,outcomes,provider_calls,tick_id" {
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
}

func TestEnrichTickUsageErrors(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"unknown finder":     {"enrich", "tick", "--providers", "clearbit"},
		"verifier as finder": {"enrich", "tick", "--providers", "millionverifier"},
		"lease too short":    {"enrich", "tick", "--lease", "10s", "--max-duration", "50s"},
		"twice":              {"enrich", "tick", "--providers", "hunter,hunter"},
		"bad output":         {"enrich", "tick", "--output", "yaml"},
	}
	for name, args := range cases {
		res := runCLI(t, map[string]string{}, args...)
		if res.code != exitUsage || lines(res.stderr) == 0 {
			t.Errorf("%s: exit %d stderr %q, want 2 with a message", name, res.code, res.stderr)
		}
	}
}
