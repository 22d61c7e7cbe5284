package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
)

// loadAvg writes a /proc/loadavg stand-in whose 1-minute load is load.
func loadAvg(t *testing.T, load string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "loadavg")
	if err := os.WriteFile(path, []byte(load+" 1.00 1.00 2/300 12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runBenchAtLoad runs a command line with the machine's load read from
// loadPath.
func runBenchAtLoad(t *testing.T, loadPath string, env map[string]string, args ...string) cliResult {
	t.Helper()
	ios, _, out, errOut := cliio.Test()
	f := newFactory(ios, func(k string) string { return env[k] })
	f.LoadAvgPath = loadPath
	code := execute(context.Background(), f, args)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// A bench on a busy machine refuses before it touches the database: the
// figure would be noise (issue 40).
func TestBenchRefusesABusyMachine(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}
	busy := loadAvg(t, "4.20")
	for _, args := range [][]string{
		{"bench", "claim", "--rows", "10", "--quiet-wait", "0"},
		{"bench", "email", "--quiet-wait", "0"},
		{"bench", "history", "--quiet-wait", "0", "--max-load", "3"},
	} {
		res := runBenchAtLoad(t, busy, env, args...)
		if res.code != exitError || !strings.Contains(res.stderr, "load average is 4.20, over --max-load") || !strings.Contains(res.stderr, "--max-load 0") {
			t.Errorf("%v at load 4.20: exit %d, stderr %q; want exit 1 naming the load and --max-load 0", args, res.code, res.stderr)
		}
		if strings.Contains(res.stderr, "127.0.0.1:1") {
			t.Errorf("%v: tried the database on a busy machine: %q", args, res.stderr)
		}
	}
	// Input is checked before the wait: a bad flag exits 2 at once.
	if res := runBenchAtLoad(t, busy, env, "bench", "email", "--steps", "0"); res.code != exitUsage {
		t.Errorf("bad input at load 4.20: exit %d, want 2 (stderr %q)", res.code, res.stderr)
	}
	for _, flag := range [][]string{{"--max-load", "-1"}, {"--quiet-wait", "-1s"}} {
		args := append([]string{"bench", "claim", "--rows", "10"}, flag...)
		if res := runBenchAtLoad(t, busy, env, args...); res.code != exitUsage || !strings.Contains(res.stderr, flag[0]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, res.code, res.stderr)
		}
	}
}

// On a quiet machine the bench goes on (here to the unreachable database),
// and --max-load 0 measures at any load.
func TestBenchStartsOnAQuietMachineOrWhenTold(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}
	for _, c := range []struct {
		load string
		args []string
	}{
		{"0.40", []string{"bench", "claim", "--rows", "10"}},
		{"9.00", []string{"bench", "claim", "--rows", "10", "--max-load", "0"}},
	} {
		res := runBenchAtLoad(t, loadAvg(t, c.load), env, c.args...)
		if res.code != exitError || !strings.Contains(res.stderr, "127.0.0.1:1") || strings.Contains(res.stderr, "over --max-load") {
			t.Errorf("%v at load %s: exit %d, stderr %q; want it to reach the (unreachable) database", c.args, c.load, res.code, res.stderr)
		}
	}
}

// The JSON result carries the load it was taken at; a run started busy is
// marked void, in JSON and on stderr.
func TestBenchReportsItsLoad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		load  string
		quiet bool
	}{{"0.40", true}, {"2.50", false}} {
		ios, _, out, _ := cliio.Test()
		f := newFactory(ios, func(string) string { return "" })
		f.LoadAvgPath, f.MaxLoad = loadAvg(t, c.load), 0
		if err := f.awaitQuiet(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := f.writeBenchJSON(struct {
			Rows int `json:"rows"`
		}{Rows: 7}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Rows    int `json:"rows"`
			Machine struct {
				Before float64 `json:"load_before"`
				After  float64 `json:"load_after"`
				Quiet  bool    `json:"quiet"`
			} `json:"machine"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if doc.Rows != 7 || doc.Machine.Before == 0 || doc.Machine.After != doc.Machine.Before || doc.Machine.Quiet != c.quiet {
			t.Errorf("load %s: JSON %s; want rows 7, load_before = load_after = %s, quiet %v", c.load, out, c.load, c.quiet)
		}
		if line := f.machineLine(); strings.Contains(line, "void") == c.quiet {
			t.Errorf("load %s: %q", c.load, line)
		}
	}
}
