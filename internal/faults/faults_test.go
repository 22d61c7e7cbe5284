package faults

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Outside a rindafaults build no switch turns on, whatever RINDA_FAULTS
// says; in one, each listed switch does, and is noted as reached once.
func TestSwitchesOnlyInTheFaultyBuild(t *testing.T) {
	reachedFile := filepath.Join(t.TempDir(), "reached")
	t.Setenv(ReachedEnv, reachedFile)
	saved := enabledForTest(map[Fault]bool{Cap: true, Spend: true})
	defer enabledForTest(saved)
	for _, f := range All {
		want := Built && (f == Cap || f == Spend)
		for range 2 {
			if got := On(f); got != want {
				t.Errorf("On(%s) = %v in a build with rindafaults %v, want %v", f, got, Built, want)
			}
		}
	}
	b, _ := os.ReadFile(reachedFile)
	got := strings.Fields(string(b))
	slices.Sort(got)
	if want := map[bool][]string{true: {"cap", "spend"}, false: nil}[Built]; !slices.Equal(got, want) {
		t.Errorf("reached %v, want %v", got, want)
	}
}

// The switches' names are distinct: RINDA_FAULTS names one each.
func TestSwitchNamesDistinct(t *testing.T) {
	seen := map[Fault]bool{}
	for _, f := range All {
		if seen[f] || f == "" || strings.ContainsAny(string(f), ", ") {
			t.Errorf("switch %q: empty, repeated or not listable in %s", f, Env)
		}
		seen[f] = true
	}
}
