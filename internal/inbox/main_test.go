package inbox

import (
	"os"
	"sync"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// binDir holds the rindactl binary the child-process tests build, once.
var binDir string

func TestMain(m *testing.M) {
	code := storetest.Run(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// rindactlBinary is the rindactl executable (testkit.Rindactl), built at
// most once for the package's tests.
func rindactlBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "rindactl-inbox-"); binErr == nil {
			binPath, binErr = testkit.Rindactl(binDir)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}
