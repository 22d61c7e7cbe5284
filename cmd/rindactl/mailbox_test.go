package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Issue 38: a paused mailbox is resumed by a command, not by SQL.
// Re-importing the campaign leaves a pause as it is; `mailbox resume`
// clears it (audited) and the next email tick sends from the mailbox.
func TestMailboxPauseListResume(t *testing.T) {
	t.Parallel()
	db, srv, env := emailCampaignSetup(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'ext-' || g, 'F' || g, 'lead' || g || '@example.test' FROM workspaces w, generate_series(1, 6) g`); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, env, "enroll", "--workspace", "acme", "--campaign", "q4", "--all-leads"); res.code != 0 {
		t.Fatalf("enroll = %+v", res)
	}
	for _, address := range []string{"sdr01@acme.test", "SDR02@acme.test"} {
		res := runCLI(t, env, "mailbox", "pause", address, "--for", "2h", "--reason", "DNS change")
		if res.code != 0 || !strings.Contains(res.stdout, "paused mailbox "+strings.ToLower(address)+" of workspace acme until") {
			t.Fatalf("mailbox pause %s = %+v", address, res)
		}
	}
	list := func() map[string]mailboxRow {
		t.Helper()
		res := runCLI(t, env, "mailbox", "list", "--output", "json")
		var doc struct{ Mailboxes []mailboxRow }
		if res.code != 0 || json.Unmarshal([]byte(res.stdout), &doc) != nil {
			t.Fatalf("mailbox list --output json = %+v", res)
		}
		byAddress := map[string]mailboxRow{}
		for _, m := range doc.Mailboxes {
			byAddress[m.Address] = m
		}
		return byAddress
	}
	for address, m := range list() {
		if m.State != "paused" || m.PausedUntil == nil || m.PauseReason != "paused by oncall: DNS change" {
			t.Errorf("%s after pause: %+v, want paused by oncall: DNS change", address, m)
		}
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || srv.Accepted() != 0 {
		t.Fatalf("email tick with both mailboxes paused: exit %d, %d sent, want 0 sent\n%s", res.code, srv.Accepted(), res.stderr)
	}
	// Re-importing the campaign does not clear a pause.
	if res := runCLI(t, env, "import", "campaign", writeCampaign(t, srv, "")); res.code != 0 {
		t.Fatalf("re-import = %+v", res)
	}
	if m := list()["sdr01@acme.test"]; m.State != "paused" {
		t.Errorf("sdr01 after re-import: %+v, want still paused", m)
	}
	res := runCLI(t, env, "mailbox", "list")
	for _, want := range []string{"sdr01@acme.test", "paused", "sdr01@acme.test (acme) paused: paused by oncall: DNS change"} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("mailbox list: exit %d, want %q in\n%s%s", res.code, want, res.stdout, res.stderr)
		}
	}

	for _, address := range []string{"sdr01@acme.test", "sdr02@acme.test"} {
		res := runCLI(t, env, "mailbox", "resume", address, "--workspace", "acme")
		if res.code != 0 || !strings.Contains(res.stdout, "resumed mailbox "+address) || !strings.Contains(res.stdout, "paused by oncall: DNS change") {
			t.Fatalf("mailbox resume %s = %+v", address, res)
		}
	}
	for address, m := range list() {
		if m.State != "active" || m.PausedUntil != nil || m.PauseReason != "" {
			t.Errorf("%s after resume: %+v, want active", address, m)
		}
	}
	if res := runCLI(t, env, "mailbox", "resume", "sdr01@acme.test"); res.code != 0 || !strings.Contains(res.stdout, "was not paused") {
		t.Errorf("resume of an active mailbox = %+v, want 'was not paused'", res)
	}
	if res := runCLI(t, env, "email", "tick"); res.code != 0 || srv.Accepted() != 6 {
		t.Fatalf("email tick after resume: exit %d, %d sent, want 6\n%s", res.code, srv.Accepted(), res.stderr)
	}

	var audits int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM audit_log
		WHERE actor = 'oncall' AND action IN ('mailbox.pause', 'mailbox.resume') AND filters->>'workspace' = 'acme'`).Scan(&audits); err != nil || audits != 5 {
		t.Errorf("audit rows = %d (%v), want 2 pauses and 3 resumes", audits, err)
	}
	var previous string
	if err := db.Pool.QueryRow(ctx, `SELECT filters->>'previous_reason' FROM audit_log
		WHERE action = 'mailbox.resume' ORDER BY id LIMIT 1`).Scan(&previous); err != nil || previous != "paused by oncall: DNS change" {
		t.Errorf("the first resume's audit row names the pause %q (%v), want the one it cleared", previous, err)
	}
}

// Bad input to the mailbox commands: a one-line error naming the fix,
// exit 2, nothing written.
func TestMailboxCommandsRefuseBadInput(t *testing.T) {
	t.Parallel()
	env, db := opsEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mailbox", "resume", "nobody@acme.test"}, `no mailbox "nobody@acme.test"`},
		{[]string{"mailbox", "pause", "a@acme.test"}, "--for with a positive duration"},
		{[]string{"mailbox", "pause", "a@acme.test", "--for", "-1h"}, "--for with a positive duration"},
		{[]string{"mailbox", "pause", "a@acme.test", "--for", "9000h"}, "up to a year"},
		{[]string{"mailbox", "resume", "a@acme.test", "--workspace", "nope"}, `unknown workspace "nope"`},
		{[]string{"mailbox", "list", "--campaign", "nope"}, `unknown campaign "nope"`},
	} {
		res := runCLI(t, env, tc.args...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tc.want) || lines(res.stderr) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, res.code, res.stderr, exitUsage, tc.want)
		}
	}
	var audits int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log`).Scan(&audits); err != nil || audits != 0 {
		t.Errorf("audit rows after refused commands = %d (%v), want 0", audits, err)
	}
}
