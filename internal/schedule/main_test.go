package schedule

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/tickkind"
)

// helperEnv turns the test binary into a `rindactl run`-like process, so a
// test can send it real signals.
const helperEnv = "RINDACTL_SCHEDULE_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "runner" {
		os.Exit(helperRunner())
	}
	os.Exit(m.Run())
}

// helperRunner runs one job: HELPER_SPEC on HELPER_SCRIPT (sh, with
// HELPER_ARG as $0), stopping on SIGTERM/SIGINT within HELPER_TIMEOUT.
func helperRunner() int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	spec, err := ParseWithSeconds(os.Getenv("HELPER_SPEC"))
	if err != nil {
		logger.Error("bad spec", "err", err)
		return 2
	}
	timeout, err := time.ParseDuration(os.Getenv("HELPER_TIMEOUT"))
	if err != nil {
		logger.Error("bad timeout", "err", err)
		return 2
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	r := &Runner{
		Jobs:            []Job{{Kind: tickkind.Email, Spec: spec, Argv: []string{"sh", "-c", os.Getenv("HELPER_SCRIPT"), os.Getenv("HELPER_ARG")}}},
		ShutdownTimeout: timeout,
		Logger:          logger,
		Stderr:          os.Stderr,
	}
	if err := r.Run(signals); err != nil {
		logger.Error("run", "err", err)
		return 1
	}
	return 0
}
