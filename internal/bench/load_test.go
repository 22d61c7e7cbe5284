package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAwaitQuiet(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "loadavg")
	write := func(load string) {
		if err := os.WriteFile(path, []byte(load+" 0.90 0.80 1/200 4242\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("3.10")
	// The load falls while it waits: it goes on with the quiet reading.
	waited := 0
	load, err := AwaitQuiet(t.Context(), path, 1.5, time.Hour, time.Millisecond, func(l float64) {
		if waited++; l != 3.1 {
			t.Errorf("told %v while waiting, want 3.1", l)
		}
		write("0.70")
	})
	if err != nil || load != 0.7 || waited != 1 {
		t.Fatalf("AwaitQuiet = %v, %v after %d waits; want 0.7 after one", load, err, waited)
	}
	// It stays busy: refused, naming the load and the way on.
	write("3.10")
	if _, err := AwaitQuiet(t.Context(), path, 1.5, 0, time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "3.10") || !strings.Contains(err.Error(), "--max-load 0") {
		t.Fatalf("busy machine: %v; want a refusal naming 3.10 and --max-load 0", err)
	}
	// max 0: any load.
	if load, err := AwaitQuiet(t.Context(), path, 0, 0, time.Millisecond, nil); err != nil || load != 3.1 {
		t.Fatalf("--max-load 0: %v, %v", load, err)
	}
	for _, bad := range []string{"", "busy 1 1"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLoad(path); err == nil {
			t.Errorf("ReadLoad(%q) did not fail", bad)
		}
	}
}
