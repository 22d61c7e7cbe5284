package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// Not on a terminal, `status --watch` prints frame after frame in plain
// text; Ctrl-C (SIGINT) ends it with exit 0.
func TestStatusWatchPlainFramesAndCtrlC(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "status", "--watch", "--interval", "500ms")
	cmd.Env = []string{runMainEnv + "=1", "DATABASE_URL=" + db.URL}
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	const header = "rindactl status --watch"
	testkit.Eventually(t, "three frames", func() bool { return strings.Count(stdout.String(), header) >= 3 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0; stderr: %s", code, stderr.String())
	}
	out := stdout.String()
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequences written to a pipe: %q", out)
	}
	if !strings.Contains(out, "\n\n"+header) || !strings.Contains(out, "tick inbox   never ran") {
		t.Errorf("frames are not plain blocks separated by a blank line:\n%s", out)
	}
}

func TestStatusWatchRejectsJSONAndShortIntervals(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"status", "--watch", "--output", "json"},
		{"status", "--watch", "--interval", "10ms"},
	} {
		if res := runCLI(t, nil, args...); res.code != exitUsage || !strings.Contains(res.stderr, "--watch") {
			t.Errorf("%v = %+v, want exit 2 naming --watch", args, res)
		}
	}
}
