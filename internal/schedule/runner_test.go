package schedule

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/testkit"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// readPids returns the pids the children wrote, one per line.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %s: %v", path, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

func assertGone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("child %d is still alive after the runner returned (kill 0: %v)", pid, err)
	}
}

func everySecond(t *testing.T) Spec {
	t.Helper()
	spec, err := ParseWithSeconds("* * * * * *")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestRunnerFiresTicksAsChildProcessesAndSkipsOverlaps(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	var logs testkit.Buffer
	r := &Runner{
		// Each run outlasts the one-second interval, so every other firing
		// finds the previous run still going.
		Jobs:            []Job{{Kind: tickkind.Enrich, Spec: everySecond(t), Argv: []string{"sh", "-c", `echo $$ >> "$0"; sleep 1.5`, pidFile}}},
		ShutdownTimeout: 20 * time.Second,
		Logger:          slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	signals := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- r.Run(signals) }()

	testkit.Eventually(t, "two runs and a skipped firing", func() bool {
		return len(readPids(t, pidFile)) >= 2 && strings.Contains(logs.String(), "skipping firing: previous run still running")
	})
	signals <- syscall.SIGTERM
	var err error
	testkit.Eventually(t, "Run to return after SIGTERM", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}

	pids := readPids(t, pidFile)
	seen := map[int]bool{}
	for _, pid := range pids {
		if pid == os.Getpid() {
			t.Errorf("a tick ran in the runner's own process %d", pid)
		}
		if seen[pid] {
			t.Errorf("pid %d ran two ticks; each firing needs its own process", pid)
		}
		seen[pid] = true
		assertGone(t, pid)
	}
	out := logs.String()
	if !strings.Contains(out, `"msg":"tick finished"`) || !strings.Contains(out, `"kind":"enrich"`) {
		t.Errorf("no finished enrich tick logged:\n%s", out)
	}
	if !strings.Contains(out, `"level":"WARN","msg":"skipping firing`) {
		t.Errorf("skipped firing not logged at warn:\n%s", out)
	}
	if strings.Contains(out, "killing tick") {
		t.Errorf("a child that exits on SIGTERM was killed:\n%s", out)
	}
}

// TestRunnerForwardsSIGTERMThenKillsWithinBound runs the runner as its own
// process and sends it a real SIGTERM. The child records the signal it got,
// ignores it, and must be killed once the shutdown timeout has passed.
func TestRunnerForwardsSIGTERMThenKillsWithinBound(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	script := `trap 'echo TERM >> "$0.signals"' TERM; echo $$ >> "$0"; while :; do sleep 0.1; done`
	const timeout = time.Second
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=runner", "HELPER_SPEC=* * * * * *",
		"HELPER_SCRIPT="+script, "HELPER_ARG="+pidFile, "HELPER_TIMEOUT="+timeout.String())
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the first tick to start", func() bool { return len(readPids(t, pidFile)) >= 1 })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	var err error
	testkit.Eventually(t, "the runner to exit after SIGTERM", func() bool {
		select {
		case err = <-waitErr:
			return true
		default:
			return false
		}
	})
	if err != nil {
		t.Fatalf("runner exited with %v, want 0 after a signal:\n%s", err, stderr.String())
	}

	signals, err := os.ReadFile(pidFile + ".signals")
	if err != nil || !strings.Contains(string(signals), "TERM") {
		t.Errorf("child never got the forwarded SIGTERM (%v): %q", err, signals)
	}
	for _, pid := range readPids(t, pidFile) {
		assertGone(t, pid)
	}
	if !strings.Contains(stderr.String(), "killing tick still running after shutdown timeout") {
		t.Errorf("kill after the shutdown timeout not logged:\n%s", stderr.String())
	}
}

func TestRunnerCannotRunWithoutJobs(t *testing.T) {
	t.Parallel()
	signals := make(chan os.Signal)
	if err := (&Runner{}).Run(signals); err == nil || !strings.Contains(err.Error(), "no ticks") {
		t.Errorf("Run with no jobs = %v, want a no-ticks error", err)
	}
	r := &Runner{Jobs: []Job{{Kind: tickkind.Email, Spec: everySecond(t)}}}
	if err := r.Run(signals); err == nil || !strings.Contains(err.Error(), "email tick: no command") {
		t.Errorf("Run with an empty command = %v, want a no-command error", err)
	}
}

func TestRunnerKeepsRunningWhenATickCannotStart(t *testing.T) {
	t.Parallel()
	var logs testkit.Buffer
	r := &Runner{
		Jobs:   []Job{{Kind: tickkind.Events, Spec: everySecond(t), Argv: []string{filepath.Join(t.TempDir(), "missing-binary")}}},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	signals := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- r.Run(signals) }()
	testkit.Eventually(t, "two failed starts", func() bool { return strings.Count(logs.String(), "cannot start tick") >= 2 })
	signals <- syscall.SIGINT
	if err := <-done; err != nil {
		t.Errorf("Run = %v; a tick that cannot start is logged, not fatal", err)
	}
}

// A tick the shutdown's signal reaches before it has set its own handler
// (rindactl run stopped just as a firing started) dies of that signal: it
// did nothing, so run logs it as stopped, not failed. A tick that fails on
// its own is still a failure. TestEveryGeneratedUnitRuns saw the first as
// "tick failed" on a loaded CI machine.
func TestRunnerLogsATickEndedByItsSignalAsStopped(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	var logs testkit.Buffer
	r := &Runner{
		Jobs: []Job{
			// No trap: SIGTERM ends it, as it ends a Go binary before main.
			{Kind: tickkind.Enrich, Spec: everySecond(t), Argv: []string{"sh", "-c", `echo $$ >> "$0"; while :; do sleep 0.1; done`, pidFile}},
			{Kind: tickkind.Email, Spec: everySecond(t), Argv: []string{"sh", "-c", "exit 3"}},
		},
		ShutdownTimeout: 20 * time.Second,
		Logger:          slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	signals := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- r.Run(signals) }()
	testkit.Eventually(t, "the looping tick to start and the failing one to fail", func() bool {
		return len(readPids(t, pidFile)) >= 1 && strings.Contains(logs.String(), `"kind":"email"`) &&
			strings.Contains(logs.String(), `"tick failed"`)
	})
	signals <- syscall.SIGTERM
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"tick failed"`) && strings.Contains(line, `"kind":"enrich"`) {
			t.Errorf("the tick ended by the forwarded signal was logged as failed: %s", line)
		}
	}
	if !strings.Contains(logs.String(), "tick stopped by the shutdown's signal before it could handle it") {
		t.Errorf("no line says the tick was stopped by the shutdown:\n%s", logs.String())
	}
}
