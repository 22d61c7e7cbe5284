package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Every tick kind is registered once, and its command sits where the kind
// says it runs (schedule, run and doctor start it from kind.Args()), with
// the frame's flags.
func TestTickRegistry(t *testing.T) {
	t.Parallel()
	root := newCmdRoot(newFactory(cliio.System(), func(string) string { return "" }))
	var registered []tickkind.Kind
	for _, newKind := range tickKinds {
		k := newKind()
		if slices.Contains(registered, k.Kind()) {
			t.Errorf("tick kind %s registered twice", k.Kind())
		}
		registered = append(registered, k.Kind())
		cmd, rest, err := root.Find(k.Kind().Args())
		if err != nil || len(rest) > 0 || cmd.CommandPath() != "rindactl "+strings.Join(k.Kind().Args(), " ") {
			t.Errorf("%s: 'rindactl %s' finds %q (rest %v, %v)", k.Kind(), strings.Join(k.Kind().Args(), " "), cmd.CommandPath(), rest, err)
			continue
		}
		for _, flag := range []string{"max-duration", "output", "metrics-file", "pushgateway-url", "push-instance"} {
			if cmd.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", cmd.CommandPath(), flag)
			}
		}
		if cmd.Example == "" {
			t.Errorf("%s has no Example", cmd.CommandPath())
		}
		// A background kind yields the CPU (--nice); the others never do.
		if background := k.Bounds().Nice != nil; background != k.Kind().Background() {
			t.Errorf("%s: --nice %v, but tickkind says background %v", k.Kind(), background, k.Kind().Background())
		}
	}
	slices.Sort(registered)
	all := slices.Sorted(slices.Values(tickkind.All))
	if !slices.Equal(registered, all) {
		t.Fatalf("registered tick kinds %v, tickkind.All %v: add the kind's line to tickKinds (ticks.go)", registered, all)
	}
}

// Issue 28: --batch was checked three ways (enrich 1..10000, email and
// inbox "must be positive", with no upper bound). One rule now holds for
// every kind that has the flag, before anything else happens (no
// database here).
func TestTickBoundsOneRule(t *testing.T) {
	t.Parallel()
	for _, newKind := range tickKinds {
		k := newKind()
		path, b := k.Kind().Args(), k.Bounds()
		type bad struct{ flag, value, want string }
		cases := []bad{{"max-duration", "0s", "invalid --max-duration 0s: use a positive duration like 50s"}}
		if b.Batch != nil {
			cases = append(cases,
				bad{"batch", "0", fmt.Sprintf("invalid --batch 0: use 1 to %d", b.Batch.Max)},
				bad{"batch", fmt.Sprint(b.Batch.Max + 1), fmt.Sprintf("invalid --batch %d: use 1 to %d", b.Batch.Max+1, b.Batch.Max)})
		}
		if b.Concurrency != nil {
			cases = append(cases, bad{"concurrency", "-1", fmt.Sprintf("invalid --concurrency -1: use 1 to %d", b.Concurrency.Max)})
		}
		for _, c := range cases {
			res := runCLI(t, map[string]string{}, append(slices.Clone(path), "--"+c.flag+"="+c.value)...)
			if res.code != exitUsage || strings.TrimSpace(res.stderr) != "rindactl: "+c.want {
				t.Errorf("%v --%s %s: exit %d stderr %q, want %d and %q", path, c.flag, c.value, res.code, res.stderr, exitUsage, c.want)
			}
		}
	}
}

// Issue 28: the enrich tick printed no report when it failed part way
// (email and inbox printed theirs); every kind now prints what it did,
// as text or JSON, and exits 1. Outcomes that cannot be recorded (a
// trigger refuses them here, as a full disk would) fail the tick after it
// claimed.
func TestEnrichTickReportsOnFailure(t *testing.T) {
	t.Parallel()
	a := newAcceptance(t)
	importAcceptanceLeads(t, a.env, "acme", "fail", 5)
	ctx := context.Background()
	if _, err := a.db.Pool.Exec(ctx, `
		CREATE FUNCTION refuse_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'no space left on device'; END $$;
		CREATE TRIGGER refuse_outcome BEFORE UPDATE ON lead_enrichment FOR EACH ROW
		WHEN (OLD.status = 'in_progress' AND NEW.status <> 'in_progress') EXECUTE FUNCTION refuse_outcome()`); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, a.env, "enrich", "tick", "--nice", "0")
	if res.code != exitError || !strings.Contains(res.stderr, "no space left on device") {
		t.Fatalf("exit %d stderr %q, want 1 with the database's reason", res.code, res.stderr)
	}
	if !strings.HasPrefix(res.stdout, "tick ") || !strings.Contains(res.stdout, " claimed 5: ") {
		t.Fatalf("stdout %q, want the report of the tick that claimed 5 leads", res.stdout)
	}

	// The leads' leases run out before a second tick may claim them; a
	// new batch makes the JSON run claim something.
	importAcceptanceLeads(t, a.env, "acme", "fail-json", 3)
	res = runCLI(t, a.env, "enrich", "tick", "--nice", "0", "--output", "json")
	var rep enrichTickJSON
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || res.code != exitError || rep.Claimed != 3 {
		t.Fatalf("exit %d, report %+v (%v) from stdout %q; want 1 and the JSON report of 3 claimed", res.code, rep, err, res.stdout)
	}
}
