package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestEnrollmentMarkStopsSequences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	srv := smtptest.New(t, smtptest.Options{Users: map[string]string{"sdr01": "pw1", "sdr02": "pw2"}})
	env := map[string]string{"DATABASE_URL": db.URL, "RINDA_SMTP_PASSWORD_SDR01": "pw1", "RINDA_SMTP_PASSWORD_SDR02": "pw2"}
	if res := runCLI(t, env, "import", "campaign", writeCampaign(t, srv, "")); res.code != 0 {
		t.Fatalf("import campaign: %+v", res)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'Lead' || g || '@Example.test' FROM workspaces w, generate_series(1, 3) g`); err != nil {
		t.Fatal(err)
	}
	// Written in a legacy spelling, then rewritten as migration 00013 does.
	if err := store.RewriteAddresses(ctx, db.Pool); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 {
		t.Fatalf("enroll: %+v", res)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || srv.Accepted() != 3 {
		t.Fatalf("step 1: %+v, accepted %d", res, srv.Accepted())
	}
	id := func(ext string) string {
		var n int64
		if err := db.Pool.QueryRow(ctx, `SELECT e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE l.external_id = $1`, ext).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(n, 10)
	}

	// A repeated id is one enrollment.
	res := runCLI(t, env, "enrollment", "mark", "--replied", id("ext-1"), "999999", id("ext-1"))
	if res.code != 0 || !strings.Contains(res.stdout, "marked 1 of 2 enrollment(s) replied; 1 id(s) not found") {
		t.Fatalf("mark --replied: %+v", res)
	}
	res = runCLI(t, env, "enrollment", "mark", "--unsubscribed", id("ext-2"), "--output", "json")
	var out struct{ Marked, Suppressed int }
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil || out.Marked != 1 || out.Suppressed != 1 {
		t.Fatalf("mark --unsubscribed: %+v", res)
	}
	if res := runCLI(t, env, "enrollment", "mark", "--replied", id("ext-1")); res.code != 0 || !strings.Contains(res.stdout, "marked 0 of 1 enrollment(s) replied; 1 already ended") {
		t.Fatalf("marking again: %+v", res)
	}

	// Make step 2 (the last) due for everyone: only the lead who did neither
	// gets it, and completes.
	if _, err := db.Pool.Exec(ctx, `UPDATE enrollments SET next_send_at = now() - interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || srv.Accepted() != 4 {
		t.Fatalf("step 2: %+v, accepted %d, want 4 (only ext-3 continues)", res, srv.Accepted())
	}
	var statuses string
	if err := db.Pool.QueryRow(ctx, `SELECT string_agg(l.external_id || '=' || e.status, ',' ORDER BY l.external_id)
		FROM enrollments e JOIN leads l ON l.id = e.lead_id`).Scan(&statuses); err != nil {
		t.Fatal(err)
	}
	if statuses != "ext-1=replied,ext-2=unsubscribed,ext-3=completed" {
		t.Fatalf("enrollments: %s", statuses)
	}
	var suppressed, audits int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM suppressions WHERE email = 'lead2@example.test' AND reason = 'unsubscribed'`).Scan(&suppressed)
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'enrollment.mark'`).Scan(&audits)
	if suppressed != 1 || audits != 3 {
		t.Fatalf("suppressions %d (want 1), audit rows %d (want 3)", suppressed, audits)
	}
}

func TestEnrollmentMarkUsageErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}
	for _, args := range [][]string{
		{"enrollment", "mark", "--replied"},
		{"enrollment", "mark", "--replied", "abc"},
		{"enrollment", "mark", "7"},
		{"enrollment", "mark", "--replied", "--unsubscribed", "7"},
	} {
		if res := runCLI(t, env, args...); res.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, res.code, res.stderr)
		}
	}
}

// Issue 27: enroll with an unknown workspace says the workspace was not
// found (it said the campaign was); a known workspace without the
// campaign still names the campaign.
func TestEnrollUnknownWorkspaceSaysWorkspace(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	env := map[string]string{"DATABASE_URL": db.URL}
	res := runCLI(t, env, "enroll", "--workspace", "nosuch", "--campaign", "q4", "--all-leads")
	if res.code != exitUsage || !strings.Contains(res.stderr, `workspace "nosuch" not found`) || strings.Contains(res.stderr, "campaign not found") {
		t.Fatalf("unknown workspace: exit %d, stderr %q; want exit 2 naming the workspace", res.code, res.stderr)
	}
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO workspaces (name) VALUES ('acme')`); err != nil {
		t.Fatal(err)
	}
	res = runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads")
	if res.code != exitUsage || !strings.Contains(res.stderr, `campaign "q4" in workspace "acme": campaign not found`) {
		t.Fatalf("unknown campaign: exit %d, stderr %q", res.code, res.stderr)
	}
}
