package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// opsSeed is a small quota incident: 30 unreachable leads of acme behind an
// open findymail breaker, and one failed enrollment.
const opsSeed = `
INSERT INTO workspaces (name) VALUES ('acme');
INSERT INTO leads (workspace_id, external_id, email) SELECT 1, 'crm-' || g, 'l' || g || '@x.test' FROM generate_series(1, 30) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, negative_cache_until, provider, last_error)
SELECT id, 1, 'unreachable', 1, now() + interval '1 day', now() + interval '1 day', 'findymail', 'quota_exhausted (HTTP 429)' FROM leads;
INSERT INTO breakers (workspace_id, provider, state, open_until, reason) VALUES (1, 'findymail', 'open', now() + interval '5 minutes', 'quota_exhausted');
INSERT INTO campaigns (workspace_id, name) VALUES (1, 'q3');
INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap) VALUES (1, 'a@acme.test', 'smtp://mx', 100);
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, next_send_at, mailbox_id, last_error)
VALUES (1, 1, 1, 'failed', now() - interval '1 hour', 1, '550 no such user');
`

func opsEnv(t *testing.T) (map[string]string, *storetest.DB) {
	t.Helper()
	db := storetest.New(t)
	if _, err := db.Pool.Exec(context.Background(), opsSeed); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"DATABASE_URL": db.URL, "USER": "oncall"}, db
}

func TestStatusCommand(t *testing.T) {
	t.Parallel()
	env, _ := opsEnv(t)

	res := runCLI(t, env, "status", "--output", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var doc struct {
		Enrich struct {
			ByStatus map[string]int64 `json:"by_status"`
		} `json:"enrich"`
		Breakers []struct{ Workspace, Provider, State string } `json:"breakers"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, res.stdout)
	}
	if doc.Enrich.ByStatus["unreachable"] != 30 || len(doc.Breakers) != 1 || doc.Breakers[0].State != "open" {
		t.Errorf("status json = %+v", doc)
	}

	res = runCLI(t, env, "status", "--overdue")
	if res.code != 0 || !strings.Contains(res.stdout, "overdue 0") || !strings.Contains(res.stdout, "drain: nothing to drain") {
		t.Errorf("status --overdue: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, args := range [][]string{
		{"status", "--workspace", "nope"},
		{"status", "--output", "yaml"},
		{"status", "extra"},
	} {
		if res := runCLI(t, env, args...); res.code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, res.code, exitUsage, res.stderr)
		}
	}
}

// Issue 16: `status -o text` is accepted like on every other command and
// prints the same table as the default.
func TestStatusOutputTextIsTheTable(t *testing.T) {
	t.Parallel()
	env, _ := opsEnv(t)
	table := runCLI(t, env, "status", "--overdue")
	text := runCLI(t, env, "status", "--overdue", "-o", "text")
	// The first line stamps the time of the run.
	_, tableBody, _ := strings.Cut(table.stdout, "\n")
	_, textBody, _ := strings.Cut(text.stdout, "\n")
	if table.code != 0 || text.code != 0 || textBody != tableBody || tableBody == "" {
		t.Fatalf("status -o text: exit %d (table exit %d); output differs:\n%s\n---\n%s", text.code, table.code, text.stdout, table.stdout)
	}
}

// Issue 16: every tick's JSON names its tick_id, which tick_runs, leases
// (locked_by) and the logs carry.
func TestTickJSONCarriesTickID(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	// With no due lead the enrich tick calls no provider; it needs a key to start.
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_HUNTER_API_KEY": "hk-test", "RINDA_FINDYMAIL_API_KEY": "fm-test"}
	for _, args := range [][]string{{"enrich", "tick", "--nice", "0"}, {"events", "deliver"}} {
		res := runCLI(t, env, append(args, "--output", "json")...)
		var rep struct {
			TickID string `json:"tick_id"`
		}
		if res.code != 0 || json.Unmarshal([]byte(res.stdout), &rep) != nil || rep.TickID == "" {
			t.Errorf("%v: exit %d, no tick_id in %s%s", args, res.code, res.stdout, res.stderr)
		}
	}
}

// Issue 16: one human time format in every table and text line (status's
// "2006-01-02 15:04:05Z"); JSON keeps RFC 3339.
func TestTablesShareOneTimeFormat(t *testing.T) {
	t.Parallel()
	env, _ := opsEnv(t)
	human := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ`)
	rfc3339 := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)
	for _, args := range [][]string{
		{"breaker", "open", "--workspace", "acme", "--provider", "hunter", "--for", "1h"},
		{"breaker", "list"},
		{"events", "list"},
	} {
		res := runCLI(t, env, args...)
		if res.code != 0 || !human.MatchString(res.stdout) || rfc3339.MatchString(res.stdout) {
			t.Errorf("%v: exit %d, want times like 2026-06-05 05:55:00Z:\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
	res := runCLI(t, env, "events", "list", "--output", "json")
	if res.code != 0 || !rfc3339.MatchString(res.stdout) {
		t.Errorf("events list --output json: exit %d, want RFC 3339 times:\n%s", res.code, res.stdout)
	}
}
