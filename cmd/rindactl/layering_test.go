package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/rindactl/rindactl/"

// TestLayering holds the package boundaries of issue 17: the email tick
// (and the tick plumbing it shares) never reaches the provider guards, and
// the store imports no domain package, only the vocabulary leaves.
func TestLayering(t *testing.T) {
	t.Parallel()
	var emailImports []string
	fset := token.NewFileSet()
	for _, file := range []string{"email.go", "tick_frame.go", "ticks.go"} {
		f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) {
				emailImports = append(emailImports, path)
			}
		}
	}
	if len(emailImports) == 0 {
		t.Fatal("email.go and the tick frame import no rindactl package; the check would prove nothing")
	}
	for _, tc := range []struct {
		what   string
		pkgs   []string
		banned func(dep string) bool
	}{
		{"the email command", emailImports, isGuard},
		{"internal/sequence", []string{module + "internal/sequence"}, isGuard},
		{"internal/events and internal/metrics", []string{module + "internal/events", module + "internal/metrics"}, isGuard},
		{"internal/store", []string{module + "internal/store"}, func(dep string) bool {
			return strings.HasPrefix(dep, module+"internal/") && !strings.HasPrefix(dep, module+"internal/store") && !slices.Contains(vocabulary, dep)
		}},
		{"the vocabulary leaves", vocabulary, func(dep string) bool {
			return strings.HasPrefix(dep, module) && !slices.Contains(vocabulary, dep)
		}},
		// Issue 28: the guard reads no provider's defaults itself (the
		// command passes them in), and events needs no enrichment to read
		// a Retry-After.
		{"internal/guard", []string{module + "internal/guard"}, func(dep string) bool {
			return strings.HasPrefix(dep, module+"internal/enrich/provider") &&
				dep != module+"internal/enrich/provider/providerspec" && dep != module+"internal/enrich/provider/providerhttp"
		}},
		{"internal/events", []string{module + "internal/events"}, func(dep string) bool {
			return strings.HasPrefix(dep, module+"internal/enrich")
		}},
		{"internal/retryafter", []string{module + "internal/retryafter"}, func(dep string) bool {
			return strings.HasPrefix(dep, module) && dep != module+"internal/retryafter"
		}},
	} {
		deps := goListDeps(t, tc.pkgs...)
		if bad := slices.DeleteFunc(deps, func(d string) bool { return !tc.banned(d) }); len(bad) > 0 {
			t.Errorf("%s imports %v", tc.what, bad)
		}
	}
}

// vocabulary are the leaf packages that the store and the domain share: the
// domain words (statuses, tick kinds), the canonical spelling of an
// address, a mailbox's sending cap, the redaction of secrets and the
// invariant harness's fault switches (off but in its broken builds); they
// import no project package.
var vocabulary = []string{module + "internal/lead", module + "internal/enrollment", module + "internal/tickkind",
	module + "internal/address", module + "internal/sendcap", module + "internal/redact", module + "internal/faults"}

func isGuard(dep string) bool { return dep == module+"internal/guard" }

func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v", pkgs, err)
	}
	return strings.Fields(string(out))
}

// TestOnlyStoreRunsGeneratedQueries: sqlc's generated code is the store's
// own; every other package (tick, demo, bench included, issue 28) calls a
// store function that names what it does and maps the generated row.
func TestOnlyStoreRunsGeneratedQueries(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sqlcdb := module + "internal/store/sqlcdb"
	benchdb := module + "internal/store/benchstore/benchdb"
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		checked++
		if pkg != module+"internal/store" && slices.Contains(imports, sqlcdb) {
			t.Errorf("%s imports %s: call a function of internal/store instead", pkg, sqlcdb)
		}
		// The demo's and the benchmarks' queries (issue 41) likewise.
		if pkg != module+"internal/store/benchstore" && slices.Contains(imports, benchdb) {
			t.Errorf("%s imports %s: call a function of internal/store/benchstore instead", pkg, benchdb)
		}
	}
	if checked < 20 {
		t.Fatalf("go list named %d packages; the check would prove little", checked)
	}
}
