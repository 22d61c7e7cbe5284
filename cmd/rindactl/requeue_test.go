package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
)

func TestRequeueCommand(t *testing.T) {
	t.Parallel()
	env, db := opsEnv(t)
	ctx := context.Background()
	unreachable := func() int64 {
		var n int64
		if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM lead_enrichment WHERE status = 'unreachable'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	res := runCLI(t, env, "requeue", "--status=unreachable", "--dry-run")
	if res.code != 0 || !strings.Contains(res.stdout, "Dry run: 30 lead(s) match status=unreachable") || !strings.Contains(res.stdout, "findymail") {
		t.Errorf("dry run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if unreachable() != 30 {
		t.Fatalf("dry run changed rows")
	}

	// Not a terminal and no --yes: refused, nothing changed.
	res = runCLI(t, env, "requeue", "--status=unreachable")
	if res.code != exitUsage || !strings.Contains(res.stderr, "pass --yes") || unreachable() != 30 {
		t.Errorf("no --yes: exit %d %s", res.code, res.stderr)
	}
	res = runCLI(t, env, "requeue", "--status=bogus")
	if res.code != exitUsage || !strings.Contains(res.stderr, "unreachable, enrichment_failed, failed") {
		t.Errorf("unknown status: exit %d %s", res.code, res.stderr)
	}
	res = runCLI(t, env, "requeue", "--status=enrichment_failed", "--yes")
	if res.code != 0 || !strings.Contains(res.stdout, "No leads match status=enrichment_failed") {
		t.Errorf("no match: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	res = runCLI(t, env, "requeue", "--status=unreachable", "--provider=findymail", "--yes", "--output", "json")
	var rep requeueReport
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &rep) != nil || rep.Moved != 30 || rep.AuditID == 0 {
		t.Fatalf("requeue --yes: exit %d %+v\n%s%s", res.code, rep, res.stdout, res.stderr)
	}
	if unreachable() != 0 {
		t.Errorf("rows left unreachable")
	}
	var actor string
	if err := db.Pool.QueryRow(ctx, "SELECT actor FROM audit_log WHERE id = $1", rep.AuditID).Scan(&actor); err != nil || actor != "oncall" {
		t.Errorf("audit actor = %q, %v", actor, err)
	}
}

// TestRequeuePrompt answers the terminal question.
func TestRequeuePrompt(t *testing.T) {
	t.Parallel()
	env, db := opsEnv(t)
	for _, tc := range []struct {
		answer string
		moved  int64
	}{{"n\n", 0}, {"yes\n", 1}} {
		ios, in, out, errOut := cliio.Test()
		ios.SetTTY(true, true, false)
		in.WriteString(tc.answer)
		f := newFactory(ios, func(k string) string { return env[k] })
		f.DatabaseURL = env["DATABASE_URL"]
		err := requeueRun(context.Background(), &RequeueOptions{f: f, Status: "failed", BatchSize: 5000, Output: "text"})
		if err != nil {
			t.Fatalf("answer %q: %v", tc.answer, err)
		}
		if !strings.Contains(errOut.String(), "Requeue 1 enrollment(s) matching status=failed? [y/N]") {
			t.Errorf("prompt = %q", errOut.String())
		}
		var active int64
		if err := db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM enrollments WHERE status = 'active'").Scan(&active); err != nil {
			t.Fatal(err)
		}
		if active != tc.moved {
			t.Errorf("answer %q: %d active, want %d (%s)", tc.answer, active, tc.moved, out.String())
		}
	}
}
