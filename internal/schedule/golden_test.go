package schedule

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rindactl/rindactl/internal/tickkind"
)

var update = flag.Bool("update", false, "rewrite the examples under deploy/ from the generator")

// deployDir holds the shipped examples: the output of
// `rindactl schedule print` with every default.
const deployDir = "../../deploy"

func defaultTicks(t *testing.T) []Tick {
	t.Helper()
	var ticks []Tick
	for _, kind := range tickkind.All {
		spec, err := Parse(DefaultSpec(kind))
		if err != nil {
			t.Fatal(err)
		}
		ticks = append(ticks, Tick{Kind: kind, Spec: spec})
	}
	return ticks
}

// TestDeployExamplesMatchGenerator keeps deploy/ in sync with Render.
// Run `go test ./internal/schedule -run TestDeployExamples -update` after
// changing a template.
func TestDeployExamplesMatchGenerator(t *testing.T) {
	t.Parallel()
	for _, format := range Formats {
		t.Run(string(format), func(t *testing.T) {
			t.Parallel()
			files, err := Render(format, Plan{Ticks: defaultTicks(t), Unsubscribe: UnsubscribeListenDefault})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(deployDir, string(format))
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
				path := filepath.Join(dir, f.Name)
				if *update {
					if err := os.WriteFile(path, []byte(f.Content), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				shipped, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run: go test ./internal/schedule -run TestDeployExamples -update)", err)
				}
				if string(shipped) != f.Content {
					t.Errorf("%s is out of date with the generator (run: go test ./internal/schedule -run TestDeployExamples -update)\n--- shipped\n%s\n--- generated\n%s", path, shipped, f.Content)
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !slices.Contains(names, e.Name()) {
					t.Errorf("%s is not generated any more; delete it", filepath.Join(dir, e.Name()))
				}
			}
		})
	}
}
