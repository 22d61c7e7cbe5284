package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// Environment switches of the suite.
const (
	// fullEnv selects the long runs (make reliability); without it every
	// harness runs a few iterations, never zero.
	fullEnv = "RINDA_RELIABILITY_FULL"
	// figuresEnv names a file the tests append their measured figures to,
	// one JSON object per line; scripts/reliability.sh turns it into the
	// figures section of docs/reliability.md.
	figuresEnv = "RINDA_RELIABILITY_FIGURES"
	// binaryEnv names the rindactl binary TestMain found for this run.
	binaryEnv = "RINDA_RELIABILITY_BINARY"
)

// commandTimeoutDefault bounds one subprocess: a hung tick fails its test
// instead of the whole run.
const commandTimeoutDefault = 2 * time.Minute

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rindactl-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		os.Exit(1)
	}
	bin, err := testkit.Rindactl(dir)
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "reliability: rindactl:", err)
		os.Exit(1)
	}
	os.Setenv(binaryEnv, bin)
	// rindactl demo and bench hand over to rindabench beside it (the
	// secrets test runs them): built into dir beside a fresh rindactl.
	os.Setenv(testkit.BinaryEnv, bin)
	if _, err := testkit.Rindabench(dir); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "reliability: rindabench:", err)
		os.Exit(1)
	}
	code := storetest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

func full() bool { return os.Getenv(fullEnv) != "" }

// iterations is n in the full run and short otherwise (never zero).
func iterations(short, n int) int {
	if full() {
		return n
	}
	return short
}

// result is what one rindactl process printed and returned.
type result struct {
	code   int
	stdout string
	stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// command prepares rindactl with exactly env (plus PATH and HOME): nothing
// from the test's own environment leaks in.
func command(ctx context.Context, env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Getenv(binaryEnv), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	return cmd
}

// rindactl runs one command line to completion.
func rindactl(t testing.TB, env map[string]string, args ...string) result {
	t.Helper()
	return rindactlIn(t, env, nil, args...)
}

// rindactlIn runs one command line with stdin.
func rindactlIn(t testing.TB, env map[string]string, stdin []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeoutDefault)
	defer cancel()
	cmd := command(ctx, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok || ctx.Err() != nil {
			t.Fatalf("rindactl %s: %v (stderr: %s)", strings.Join(args, " "), err, errOut.String())
		}
		code = ee.ExitCode()
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// figure records a measured figure for docs/reliability.md when the run
// collects them. Lines are short single writes to an O_APPEND file, so
// parallel tests do not interleave.
func figure(t testing.TB, name string, value any) {
	t.Helper()
	path := os.Getenv(figuresEnv)
	if path == "" {
		return
	}
	line, err := json.Marshal(struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
		Full  bool   `json:"full"`
	}{name, value, full()})
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatalf("figures file: %v", err)
	}
	defer fh.Close()
	if _, err := fh.Write(append(line, '\n')); err != nil {
		t.Fatalf("figures file: %v", err)
	}
}
