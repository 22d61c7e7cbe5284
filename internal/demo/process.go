package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runner starts the rindactl binary as child processes with the demo's
// environment: each tick is a separate process, exactly as cron runs them.
type runner struct {
	binary string
	env    []string
	// logDir, when set, receives each child's stderr (its JSON log lines).
	logDir string
}

// childEnv is the parent's environment without anything that could point a
// child at real infrastructure (a production database, real provider keys,
// a real Slack channel), plus extra. PG* variables stay: the demo's own
// connections honour them too (PGPASSWORD, PGSSLMODE for DATABASE_URL's
// server).
func childEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == "DATABASE_URL" || strings.HasPrefix(name, "RINDA_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// run runs one command line to completion and returns its stdout. A
// non-zero exit becomes an error carrying the last lines of its stderr.
func (r *runner) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, r.binary, args...)
	cmd.Env = r.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Own process group, and SIGTERM (the tick's graceful stop) first when
	// the demo is interrupted; Pdeathsig stops a child whose demo died.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if r.logDir != "" {
		_ = os.WriteFile(filepath.Join(r.logDir, name+".log"), stderr.Bytes(), 0o600)
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("rindactl %s: %v: %s", strings.Join(args, " "), err, tail(stderr.String(), 3))
	}
	return stdout.Bytes(), nil
}

// runJSON runs a command line that prints one JSON document and decodes it.
func (r *runner) runJSON(ctx context.Context, name string, v any, args ...string) error {
	out, err := r.run(ctx, name, args...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("rindactl %s: reading its JSON output: %v", strings.Join(args, " "), err)
	}
	return nil
}

// tail returns the last n non-empty lines of s, joined with " | ".
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
