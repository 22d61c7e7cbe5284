package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/testkit"
)

// builtRindabench is the rindabench `demo` and `bench` run in these
// tests, built once for the package beside a rindactl (or make test's).
var builtRindabench = sync.OnceValues(func() (string, error) {
	return testkit.Rindabench(filepath.Join(rindactlDir, "bench"))
})

// Issue 41: the shipped binary links no test server. The demo and the
// benchmarks (and the stand-ins they start) are cmd/rindabench; rindactl
// only runs that binary.
func TestRindactlLinksNoTestServers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/rindactl/rindactl/cmd/rindactl").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/rindactl/rindactl/internal/pgtmp",
		"github.com/rindactl/rindactl/internal/store/storetest",
		"github.com/rindactl/rindactl/internal/store/benchstore",
		"github.com/rindactl/rindactl/internal/testkit",
		"github.com/rindactl/rindactl/internal/demo",
		"github.com/rindactl/rindactl/internal/bench",
		"github.com/emersion/go-imap/v2/imapserver",
	}
	for _, dep := range strings.Fields(string(out)) {
		// smtptest, imaptest, providertest, storetest: every test kit.
		kit := strings.HasPrefix(dep, "github.com/rindactl/rindactl/") && strings.HasSuffix(dep, "test")
		if kit || slices.Contains(forbidden, dep) {
			t.Errorf("rindactl links %s: test servers and bench/demo code belong in cmd/rindabench", dep)
		}
	}
}

// `rindactl demo` and `rindactl bench ...` are rindabench's commands, with
// its help, usage errors and exit codes.
func TestDemoAndBenchRunRindabench(t *testing.T) {
	t.Parallel()
	res := runCLI(t, nil, "demo", "--help")
	if res.code != 0 || !strings.Contains(res.stdout, "--leads") || !strings.Contains(res.stdout, "rindabench demo") {
		t.Fatalf("demo --help: exit %d, stdout %q: want rindabench demo's help", res.code, res.stdout)
	}
	res = runCLI(t, map[string]string{"DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "bench", "claim")
	if res.code != exitUsage || !strings.Contains(res.stderr, "--rows is required") {
		t.Fatalf("bench claim without --rows: exit %d, stderr %q: want rindabench's usage error, exit 2", res.code, res.stderr)
	}
	res = runCLI(t, nil, "bench", "width", "--help")
	if res.code != 0 || !strings.Contains(res.stdout, "--widths") {
		t.Fatalf("bench width --help: exit %d, stdout %q: want rindabench bench width's help", res.code, res.stdout)
	}
}

// Without rindabench, demo and bench say where they went.
func TestDemoWithoutRindabenchSaysHowToBuildIt(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("rindabench"); err == nil {
		t.Skip("a rindabench is on PATH")
	}
	ios, _, _, errOut := cliio.Test()
	f := newFactory(ios, func(string) string { return "" })
	// findRindabench: the test binary has no rindabench beside it.
	for _, args := range [][]string{{"demo"}, {"bench", "claim"}} {
		errOut.Reset()
		if code := execute(t.Context(), f, args); code != exitUsage || !strings.Contains(errOut.String(), "go build -o bin/rindabench ./cmd/rindabench") {
			t.Fatalf("%v: exit %d, stderr %q: want exit 2 saying how to build rindabench", args, code, errOut.String())
		}
	}
}
