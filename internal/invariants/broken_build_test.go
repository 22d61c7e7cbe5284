package invariants

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// brokenEnv turns TestHarnessFindsBrokenBuilds on (make invariants-broken):
// it builds rindactl once per invariant and runs schedules until the
// harness finds each break, minutes on a busy machine, too long for
// make test.
const brokenEnv = "RINDA_INVARIANTS_BROKEN"

// brokenRunsMax is how many seeded runs a broken build gets to be caught.
const brokenRunsMax = 20

// edit replaces old (which must occur exactly once) by new in file, a path
// from the module root.
type edit struct{ file, old, new string }

// brokenBuilds are deliberately broken builds of rindactl, one per
// invariant: each undoes what keeps that invariant (compiled with go build
// -overlay, so the tree is not touched). An edit that no longer applies
// fails the test, so a refactoring cannot quietly make a case vacuous.
var brokenBuilds = []struct {
	check string // the invariant that must catch it (checks, checkName)
	why   string
	edits []edit
}{
	{"cap", "the claim counts none of a mailbox's taken slots", []edit{{
		"internal/store/queries/byhand/email_claim.sql",
		"FROM mailbox_cap_slots(o.id, now()) c)",
		"FROM mailbox_cap_slots(o.id, now()) c WHERE false)",
	}}},
	{"window", "no window is ever shut when a row is claimed or sent", []edit{{
		"internal/sequence/dispatch.go",
		"opens := w.Next(now, r.Timezone)",
		"opens := now",
	}}},
	{"once", "a connection dropped after the final dot is a transient failure, retried", []edit{{
		"internal/sequence/delivery_error.go",
		"case phase == PhaseDataEnd:\n\t\treturn DeliveryUnknown",
		"case phase == PhaseDataEnd:\n\t\treturn DeliveryTransient",
	}}},
	{"stops", "follow-ups of replied and unsubscribed enrollments are claimed", []edit{{
		"internal/store/queries/byhand/email_claim.sql",
		"          AND e.status = 'active'\n          AND e.current_step > 1\n",
		"          AND e.status IN ('active', 'replied', 'unsubscribed')\n          AND e.current_step > 1\n",
	}}},
	{"recorded", "the settle never moves a send off 'sending'", []edit{{
		"internal/store/queries/byhand/email_settle.sql",
		"WHERE s.enrollment_id = u.enrollment_id AND s.step = u.step AND s.status = 'sending'",
		"WHERE s.enrollment_id = u.enrollment_id AND s.step = u.step AND s.status = 'never'",
	}}},
	{"spend", "the guard admits and bills calls whatever the ceiling", []edit{
		{"internal/store/queries/byhand/guard_admit.sql",
			"w.monthly_usd_ceiling AS ceiling,",
			"NULL::numeric AS ceiling,"},
		{"internal/store/queries/byhand/guard_admit.sql",
			"    WHERE (SELECT monthly_usd_ceiling FROM workspaces WHERE id = $1::bigint) IS NULL\n",
			"    WHERE true OR (SELECT monthly_usd_ceiling FROM workspaces WHERE id = $1::bigint) IS NULL\n"},
	}},
}

// Each invariant the harness checks is found broken on a build that
// breaks it: the harness runs seeded schedules against that build until
// the invariant's check fails (within brokenRunsMax runs). The seeds are
// the same each time (1, 2, ...); the schedules' timing is not, so a case
// may need a different number of runs from one time to the next.
func TestHarnessFindsBrokenBuilds(t *testing.T) {
	if os.Getenv(brokenEnv) == "" {
		t.Skipf("set %s=1 (make invariants-broken) to build and run the broken builds", brokenEnv)
	}
	root := moduleRoot(t)
	for _, bb := range brokenBuilds {
		t.Run(bb.check, func(t *testing.T) {
			bin := buildBroken(t, root, bb.edits)
			for seed := int64(1); seed <= brokenRunsMax; seed++ {
				var found []string
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					w := newWorld(t, seed)
					w.bin = bin
					w.schedule()
					found = checkNamed(t, bb.check).run(w.collect())
				})
				if len(found) > 0 {
					t.Logf("%s (%s): found at seed %d: %s", bb.check, bb.why, seed, found[0])
					fmt.Printf("invariants-broken: %s found at seed %d\n", bb.check, seed)
					return
				}
			}
			t.Errorf("the harness did not find %q broken in %d runs of a build where %s", bb.check, brokenRunsMax, bb.why)
		})
	}
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

// buildBroken builds rindactl with edits applied through an overlay.
func buildBroken(t *testing.T, root string, edits []edit) string {
	t.Helper()
	dir := t.TempDir()
	replaced := map[string]string{}
	for _, e := range edits {
		src := filepath.Join(root, e.file)
		text, ok := replaced[src]
		if !ok {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		if n := strings.Count(text, e.old); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once: update the broken build", e.file, e.old, n)
		}
		replaced[src] = strings.Replace(text, e.old, e.new, 1)
	}
	overlay := map[string]map[string]string{"Replace": {}}
	i := 0
	for src, text := range replaced {
		i++
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(src)))
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		overlay["Replace"][src] = p
	}
	js, _ := json.Marshal(overlay)
	op := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(op, js, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rindactl-broken")
	cmd := exec.Command("go", "build", "-overlay", op, "-o", bin, "github.com/rindactl/rindactl/cmd/rindactl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the broken rindactl: %v\n%s", err, out)
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
