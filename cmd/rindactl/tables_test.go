package main

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The long values operators really see: long workspace, mailbox and
// campaign names, provider error bodies as reasons, SMTP replies as pause
// reasons, a wrapped database error as a tick's failure.
const (
	longBreakerReason = "quota_exhausted: HTTP 429 {\"error\":\"monthly credit limit reached for this API key; upgrade your plan or wait for renewal\"}"
	longEventError    = "post to Slack: HTTP 500 Internal Server Error: upstream connect error or disconnect/reset before headers. reset reason: overflow"
)

const longValuesSeed = `
INSERT INTO workspaces (name, monthly_usd_ceiling) VALUES ('acme-outbound-emea', 12500), ('beta-partners-apac', NULL);
INSERT INTO leads (workspace_id, external_id, email) SELECT 1 + g % 2, 'crm-' || g, 'l' || g || '@x.test' FROM generate_series(1, 1200) g;
INSERT INTO lead_enrichment (lead_id, workspace_id, status, attempts, next_attempt_at, negative_cache_until, provider, last_error)
SELECT id, workspace_id, 'unreachable', 1, now() + interval '1 day', now() + interval '1 day', 'millionverifier', 'quota_exhausted (HTTP 429)' FROM leads;
INSERT INTO breakers (workspace_id, provider, state, open_until, reason, consecutive_failures, episode)
VALUES (1, 'millionverifier', 'open', now() + interval '5 minutes', '` + longBreakerReason + `', 12345, 1042),
       (2, 'findymail', 'open', now() - interval '5 minutes', 'auth_failed: HTTP 401 invalid API key', 3, 7);
INSERT INTO provider_calls (workspace_id, provider, state, cost_usd) VALUES (1, 'millionverifier', 'settled', 11234.5678);
INSERT INTO campaigns (workspace_id, name) VALUES (1, 'q3-enterprise-decision-makers-follow-up');
INSERT INTO mailboxes (workspace_id, address, smtp_url, daily_cap, paused_until, pause_reason)
VALUES (1, 'ana.rodriguez-garcia@outbound.acme-corporation.test', 'smtp://mx', 1500, now() + interval '1 hour',
        '421 4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address');
INSERT INTO campaign_mailboxes VALUES (1, 1);
INSERT INTO enrollments (campaign_id, lead_id, workspace_id, next_send_at, mailbox_id)
SELECT 1, id, 1, now() - interval '3 hours', 1 FROM leads WHERE workspace_id = 1;
INSERT INTO events (kind, workspace_id, provider, dedupe_key, attempts, next_attempt_at, last_error)
VALUES ('provider_auth_failed', 2, 'findymail', 'k1', 4, now() + interval '10 minutes', '` + longEventError + `'),
       ('quota_exhausted', 1, 'millionverifier', 'k2', 0, now(), NULL);
INSERT INTO tick_runs (kind, tick_id, host, pid, started_at, finished_at, claimed, counts, exit_status, error)
VALUES ('enrich', 'enrich-host-with-a-long-name-1', 'worker-eu-west-1a.internal', 1, now() - interval '2 hours', now() - interval '119 minutes', 0, '{}', 1,
        'database: ERROR: canceling statement due to statement timeout (SQLSTATE 57014) while claiming a batch of 200 leads');
`

// Every command that prints a table fits 80 columns with long values, and
// its JSON keeps them whole.
func TestTablesFit80Columns(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	if _, err := db.Pool.Exec(context.Background(), longValuesSeed); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": db.URL, "USER": "oncall"}

	for _, args := range [][]string{
		{"status"},
		{"status", "--overdue"},
		{"breaker", "list"},
		{"workspace", "list"},
		{"events", "list"},
		{"requeue", "--status=unreachable", "--dry-run"},
		{"migrate", "status"},
	} {
		res := runCLI(t, env, args...)
		if res.code != 0 {
			t.Errorf("%v: exit %d: %s", args, res.code, res.stderr)
			continue
		}
		if !strings.Contains(res.stdout, "───") && args[len(args)-1] != "--overdue" { // nothing overdue: no table
			t.Errorf("%v: no table:\n%s", args, res.stdout)
		}
		for _, l := range strings.Split(res.stdout, "\n") {
			if w := lipgloss.Width(l); w > cliio.Width {
				t.Errorf("%v: a line is %d columns, want at most %d:\n%s", args, w, cliio.Width, l)
			}
		}
	}

	// A delivery error is cut with an ellipsis in the table; JSON keeps
	// every long value whole.
	events := runCLI(t, env, "events", "list").stdout
	if strings.Contains(events, "reset reason: overflow") || !strings.Contains(events, "…") {
		t.Errorf("events list: long error not cut with an ellipsis:\n%s", events)
	}
	for _, tc := range []struct {
		args []string
		long string
	}{
		{[]string{"breaker", "list"}, longBreakerReason},
		{[]string{"events", "list"}, longEventError},
	} {
		if js := runCLI(t, env, append(tc.args, "--output", "json")...).stdout; !strings.Contains(js, strings.ReplaceAll(tc.long, `"`, `\"`)) {
			t.Errorf("%v --output json: long value cut:\n%s", tc.args, js)
		}
	}

	// Reasons follow their tables whole (wrapped); counts, money and
	// timestamps in cells are never cut; counts carry thousands separators.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"status"}, []string{"unusual rate of", "SQLSTATE 57014", "1,200", "$11,234.57", "$12,500.00"}},
		{[]string{"breaker", "list"}, []string{"12,345", "episode 1,042", "expired", "monthly credit limit", "invalid"}},
		{[]string{"workspace", "list"}, []string{"12,500.00"}},
		{[]string{"requeue", "--status=unreachable", "--dry-run"}, []string{"1,200", "millionverifier", "600"}},
	} {
		out := runCLI(t, env, tc.args...).stdout
		for _, want := range tc.want {
			if !strings.Contains(out, want) {
				t.Errorf("%v: %q missing:\n%s", tc.args, want, out)
			}
		}
	}
}
