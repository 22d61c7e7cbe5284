package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/schedule"
	"github.com/rindactl/rindactl/internal/testkit"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func TestRunFiresTicksAsChildProcessesAndStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	var stderr testkit.Buffer
	ios := &cliio.IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &stderr}
	f := newFactory(ios, func(string) string { return "" })
	f.LogFormat, f.LogLevel = "json", "info"
	f.DatabaseURL = "postgres://rinda:Sup3r-S3cret@127.0.0.1:5432/rinda"

	var opts *RunOptions
	cmd := newCmdRun(f, func(_ context.Context, o *RunOptions) error { opts = o; return nil })
	cmd.SetArgs([]string{"--enrich", "* * * * * *", "--email", "off", "--events", "off", "--inbox", "off", "--prune", "off", "--shutdown-timeout", "20s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if opts.ShutdownTimeout != 20*time.Second || opts.Enrich != "* * * * * *" || opts.Email != "off" {
		t.Fatalf("flags parsed into %+v", opts)
	}

	dir := t.TempDir()
	var argvs [][]string // written before the scheduler starts, read after it returns
	opts.TickArgv = func(tick schedule.Tick) []string {
		argvs = append(argvs, tick.Command())
		// Outlasts the one-second interval, so overlapping firings happen.
		return []string{"sh", "-c", `echo $$ >> "$0/pids"; printf %s "$DATABASE_URL" > "$0/env"; sleep 1.5`, dir}
	}
	signals := make(chan os.Signal, 1)
	opts.Signals = signals
	done := make(chan error, 1)
	go func() { done <- runRun(context.Background(), opts) }()

	pids := func() []string {
		data, _ := os.ReadFile(filepath.Join(dir, "pids"))
		return strings.Fields(string(data))
	}
	testkit.Eventually(t, "two enrich ticks and a skipped firing", func() bool {
		return len(pids()) >= 2 && strings.Contains(stderr.String(), "skipping firing")
	})
	signals <- syscall.SIGTERM
	var err error
	testkit.Eventually(t, "run to return after SIGTERM", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err != nil {
		t.Fatalf("run returned %v after SIGTERM, want nil (exit 0)", err)
	}

	got := pids()
	if len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
		t.Errorf("ticks shared a process: pids %v", got)
	}
	for _, p := range got {
		pid, _ := strconv.Atoi(p)
		if pid == os.Getpid() {
			t.Errorf("a tick ran in-process")
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("tick %d outlived run (kill 0: %v)", pid, err)
		}
	}
	if len(argvs) != 1 || strings.Join(argvs[0], " ") != "enrich tick --max-duration=1s" {
		t.Errorf("commands built for %v, want only the enrich tick", argvs)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env"))
	if string(env) != f.DatabaseURL {
		t.Errorf("child saw DATABASE_URL %q, want the --database-url value", env)
	}
	if strings.Contains(stderr.String(), "Sup3r-S3cret") {
		t.Errorf("the database password reached the log:\n%s", stderr.String())
	}
}

func TestRunRejectsBadInputWithExit2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--enrich", "61 * * * * *"}, `--enrich: cron spec "61 * * * * *": second field`},
		{[]string{"--email", "* * * *"}, `--email: cron spec "* * * *": expected 5 fields`},
		{[]string{"--events", "@every 5s"}, `--events: cron spec "@every 5s"`},
		{[]string{"--shutdown-timeout", "0s"}, "--shutdown-timeout 0s"},
		{[]string{"--enrich", "off", "--email", "off", "--events", "off", "--inbox", "off", "--prune", "off"}, "every tick is off"},
	}
	for _, tt := range tests {
		res := runCLI(t, nil, append([]string{"run"}, tt.args...)...)
		if res.code != 2 || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tt.args, res.code, res.stderr, tt.want)
		}
	}
}

func TestRunReexecutesItselfPerTick(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := cliio.Test()
	f := newFactory(ios, func(string) string { return "" })
	f.LogFormat, f.LogLevel = "json", "debug"
	argv, err := selfTickArgv(f)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := schedule.ParseWithSeconds("*/30 * * * * *")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got := argv(schedule.Tick{Kind: tickkind.Email, Spec: spec})
	want := []string{exe, "email", "tick", "--max-duration=20s", "--log-format=json", "--log-level=debug"}
	if !slices.Equal(got, want) {
		t.Errorf("argv = %q, want %q", got, want)
	}
	got = argv(schedule.Tick{Kind: tickkind.Inbox, Spec: spec})
	want = []string{exe, "inbox", "tick", "--max-duration=20s", "--log-format=json", "--log-level=debug"}
	if !slices.Equal(got, want) {
		t.Errorf("inbox argv = %q, want %q", got, want)
	}
}
