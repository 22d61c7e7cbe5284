package bench_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The raw-SQL floors read the tick's own SQL files: a query moved or
// reshaped must fail here, not in the first `make bench` after it.
func TestFloorScriptsRunOnTheTicksOwnSQL(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql not installed (apt-get install postgresql-client): the floor scripts were not run")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		script string
		args   []string
		rate   string
	}{
		{"scripts/bench-floor.sh", []string{"2000", "2"}, "rows_per_sec"},
		{"scripts/bench-email-floor.sh", []string{"300", "4", "1"}, "sends_per_sec"},
	} {
		db := storetest.New(t)
		cmd := exec.Command("bash", append([]string{c.script}, c.args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "DATABASE_URL="+db.URL)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("%s: %v\n%s%s", c.script, err, out, stderr)
		}
		var res map[string]float64
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%s printed %q: %v", c.script, out, err)
		}
		if res[c.rate] <= 0 {
			t.Errorf("%s: %s = %v, want a positive rate (output %s)", c.script, c.rate, res[c.rate], out)
		}
	}
}
