package invariants

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/faults"
)

// brokenEnv turns TestHarnessFindsBrokenBuilds on (make invariants-broken):
// it runs schedules against rindactl's broken builds until the harness
// finds each break, minutes on a busy machine, too long for make test.
const brokenEnv = "RINDA_INVARIANTS_BROKEN"

// brokenRunsMax is how many seeded runs a broken build gets to be caught.
// A case stops at its first catch, so a larger bound costs time only when
// a run is unlucky. Whether a kill lands on a call in flight is timing:
// two runs caught paid_find_twice at seeds 1 and 25 and
// parked_while_servable at 15 and 7, about 1 in 15 runs; 120 runs leave a
// miss at under 1 in 2,000 (40 left 1 in 16, too flaky for CI).
const brokenRunsMax = 120

// brokenBuilds are deliberately broken builds of rindactl, one per
// invariant: the build with the rindafaults tag, with the fault switch
// that undoes what keeps that invariant turned on (internal/faults says
// where each one acts). A switch is Go at the guard it breaks, not a text
// patch, so it moves with the code; TestEveryFaultIsWired fails when one
// is listed here but called nowhere, or not listed.
var brokenBuilds = []struct {
	check string // the invariant that must catch it (checks, checkName)
	fault faults.Fault
}{
	{"cap", faults.Cap},
	{"window", faults.Window},
	{"once", faults.Once},
	{"stops", faults.Stops},
	{"recorded", faults.Recorded},
	{"spend", faults.Spend},
	{"paid_find_twice", faults.BoughtTwice},
	{"parked_while_servable", faults.ParkedWhileServable},
}

// Each invariant the harness checks is found broken on a build that
// breaks it: the harness runs seeded schedules with its fault switched on
// until the invariant's check fails (within brokenRunsMax runs), and the
// switch must have been reached (the faulty code ran). The seeds are the
// same each time (1, 2, ...); the schedules' timing is not, so a case may
// need a different number of runs from one time to the next.
func TestHarnessFindsBrokenBuilds(t *testing.T) {
	if os.Getenv(brokenEnv) == "" {
		t.Skipf("set %s=1 (make invariants-broken) to build and run the broken builds", brokenEnv)
	}
	bin := buildFaulty(t, moduleRoot(t))
	for _, bb := range brokenBuilds {
		t.Run(bb.check, func(t *testing.T) {
			reachedFile := filepath.Join(t.TempDir(), "reached")
			for seed := int64(1); seed <= brokenRunsMax; seed++ {
				var found []string
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					w := newWorld(t, seed)
					w.bin = bin
					for _, env := range []map[string]string{w.tickEnv, w.ownerEnv} {
						env[faults.Env], env[faults.ReachedEnv] = string(bb.fault), reachedFile
					}
					w.schedule()
					found = checkNamed(t, bb.check).run(w.collect())
				})
				if len(found) > 0 {
					if !reached(reachedFile, bb.fault) {
						t.Fatalf("%s found at seed %d but its fault switch %q was never reached: the check fails on a build that breaks nothing: %s", bb.check, seed, bb.fault, found[0])
					}
					t.Logf("%s (fault %s): found at seed %d: %s", bb.check, bb.fault, seed, found[0])
					fmt.Printf("invariants-broken: %s found at seed %d\n", bb.check, seed)
					return
				}
			}
			if !reached(reachedFile, bb.fault) {
				t.Errorf("the fault switch %q was never reached in %d runs: the schedules never run the code it breaks", bb.fault, brokenRunsMax)
				return
			}
			t.Errorf("the harness did not find %q broken in %d runs with the fault %q on", bb.check, brokenRunsMax, bb.fault)
		})
	}
}

// reached reports whether a faulty build's process noted fault as reached.
func reached(file string, fault faults.Fault) bool {
	b, _ := os.ReadFile(file)
	return slices.Contains(strings.Fields(string(b)), string(fault))
}

func checkNamed(t *testing.T, name string) check {
	for _, c := range append(checks, enrichmentChecks...) {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no check named %q", name)
	return check{}
}

// buildFaulty builds rindactl with its fault switches (the rindafaults tag).
func buildFaulty(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rindactl-faulty")
	cmd := exec.Command("go", "build", "-tags", "rindafaults", "-o", bin, "github.com/rindactl/rindactl/cmd/rindactl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the faulty rindactl: %v\n%s", err, out)
	}
	return bin
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Every fault switch is a broken build of the harness, caught by a check
// it has, and called (faults.On(faults.X)) somewhere in rindactl's code
// outside tests and the faults package: a switch whose guard was removed
// or moved without it fails here, in make test, not in a broken-build run.
// That the call changes behaviour is TestHarnessFindsBrokenBuilds' to show.
func TestEveryFaultIsWired(t *testing.T) {
	t.Parallel()
	listed := map[faults.Fault]int{}
	for _, bb := range brokenBuilds {
		listed[bb.fault]++
		checkNamed(t, bb.check)
	}
	for _, f := range faults.All {
		if listed[f] != 1 {
			t.Errorf("fault %q is listed %d times in brokenBuilds, want once", f, listed[f])
		}
	}
	if len(listed) != len(faults.All) {
		t.Errorf("brokenBuilds lists %d faults, internal/faults has %d", len(listed), len(faults.All))
	}
	root := moduleRoot(t)
	names := faultConstants(t, filepath.Join(root, "internal", "faults", "faults.go"))
	called := map[faults.Fault][]string{}
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.Contains(path, string(filepath.Separator)+"faults"+string(filepath.Separator)) {
				return err
			}
			for _, f := range faultCalls(t, path, names) {
				rel, _ := filepath.Rel(root, path)
				called[f] = append(called[f], rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range faults.All {
		if len(called[f]) == 0 {
			t.Errorf("fault %q is called nowhere: its broken build would break nothing (put faults.On(faults.X) back at the guard it undoes)", f)
		} else {
			t.Logf("%s: %s", f, strings.Join(called[f], ", "))
		}
	}
}

// faultConstants maps the names of the Fault constants in file to their
// values.
func faultConstants(t *testing.T, file string) map[string]faults.Fault {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]faults.Fault{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != len(vs.Names) {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Fault" {
			return true
		}
		for i, v := range vs.Values {
			if lit, ok := v.(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				out[vs.Names[i].Name] = faults.Fault(s)
			}
		}
		return true
	})
	if len(out) != len(faults.All) {
		t.Fatalf("%s declares %d Fault constants, faults.All has %d", file, len(out), len(faults.All))
	}
	return out
}

// faultCalls lists the faults file switches on: faults.On(faults.X).
func faultCalls(t *testing.T, file string, names map[string]faults.Fault) []faults.Fault {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []faults.Fault
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 || !isSelector(call.Fun, "faults", "On") {
			return true
		}
		if arg, ok := call.Args[0].(*ast.SelectorExpr); ok && isSelector(arg, "faults", arg.Sel.Name) {
			if fault, ok := names[arg.Sel.Name]; ok {
				out = append(out, fault)
			}
		}
		return true
	})
	return out
}

func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
