package main

import (
	"context"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/demo"
)

func TestDemoFlags(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := cliio.Test()
	f := newFactory(ios, func(string) string { return "" })
	var got *DemoOptions
	cmd := newCmdDemo(f, func(_ context.Context, o *DemoOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--leads", "300", "--overdue", "100", "--mailboxes", "4", "--rounds", "2", "--keep", "--output", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Leads != 300 || got.Overdue != 100 || got.Mailboxes != 4 || got.Rounds != 2 || !got.Keep || got.Output != "json" {
		t.Fatalf("options %+v do not match the flags", got)
	}

	cmd = newCmdDemo(f, func(_ context.Context, o *DemoOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Leads != demo.LeadsDefault || got.Overdue != demo.OverdueDefault || got.Mailboxes != demo.MailboxesDefault || got.Rounds != demo.RoundsDefault || got.Keep {
		t.Fatalf("defaults %+v are not the incident's scaled copy", got)
	}
}

func TestDemoAndBenchUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}
	for _, args := range [][]string{
		{"demo", "--mailboxes", "0"},
		{"demo", "--rounds", "0"},
		{"demo", "--leads", "0", "--overdue", "0"},
		{"demo", "--output", "yaml"},
		{"bench", "claim"},
		{"bench", "claim", "--rows", "10", "--batch", "0"},
		{"bench", "email", "--steps", "0"},
		{"bench", "email", "--mailboxes", "0"},
		{"bench", "email", "--smtp-delay", "-1ms"},
		{"bench", "email", "--smtp-delay", "2h"},
		{"bench", "email", "--smtp-delay", "soon"},
		{"bench", "width", "--daily-cap", "-1"},
	} {
		if res := runCLI(t, env, args...); res.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, res.code, res.stderr)
		}
	}
}

func TestBenchWithoutDatabaseSaysHowToSetIt(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "bench", "claim", "--rows", "10")
	if res.code != exitUsage || !strings.Contains(res.stderr, "DATABASE_URL") {
		t.Fatalf("exit %d, stderr %q: want exit 2 naming DATABASE_URL", res.code, res.stderr)
	}
}
