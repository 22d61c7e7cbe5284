package schedule

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// securityExposureMax is the overall exposure `systemd-analyze security`
// may report for a generated service: "OK" is below 2 (the units scored
// 5.5, MEDIUM, before the issue 16 hardening).
const securityExposureMax = 2.0

// Issue 16: the generated services carry the hardening options
// `systemd-analyze security` lists, as far as a tick cannot miss them.
func TestSystemdAnalyzeSecurity(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (apt-get install systemd); hardening unscored")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "rindactl")
	if err := os.WriteFile(binary, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := Render(FormatSystemd, Plan{Ticks: defaultTicks(t), Binary: binary, EnvFile: filepath.Join(dir, "env"), Unsubscribe: UnsubscribeListenDefault})
	if err != nil {
		t.Fatal(err)
	}
	overall := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`)
	for _, f := range files {
		if filepath.Ext(f.Name) != ".service" {
			continue
		}
		path := filepath.Join(dir, f.Name)
		if err := os.WriteFile(path, []byte(f.Content), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, analyze, "security", "--offline=yes", path).CombinedOutput()
		cancel()
		m := overall.FindSubmatch(out)
		if m == nil {
			t.Skipf("systemd-analyze security --offline is not supported here (%v); hardening unscored", err)
		}
		score, _ := strconv.ParseFloat(string(m[1]), 64)
		if score > securityExposureMax {
			t.Errorf("%s: exposure %.1f, want at most %.1f\n%s", f.Name, score, securityExposureMax, out)
		}
	}
}
