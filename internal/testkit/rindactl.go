package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BinaryEnv names a rindactl executable built for this test run: make test
// builds it once for every package (a build is seconds of linking per
// package on a busy 2-core machine). It must be built from this tree; a
// stale one tests old code.
const BinaryEnv = "RINDA_TEST_BINARY"

// Rindactl returns the rindactl executable tests run as child processes:
// $RINDA_TEST_BINARY when set, else a fresh build of this tree into dir.
// Either way the file is named rindactl.
func Rindactl(dir string) (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if filepath.Base(bin) != "rindactl" {
			return "", fmt.Errorf("%s=%s: the file must be named rindactl (units name it so)", BinaryEnv, bin)
		}
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", BinaryEnv, err)
		}
		return bin, nil
	}
	bin := filepath.Join(dir, "rindactl")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/rindactl/rindactl/cmd/rindactl").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// BenchBinaryEnv names a rindabench executable built for this test run
// (make test builds it beside $RINDA_TEST_BINARY).
const BenchBinaryEnv = "RINDA_TEST_BENCH_BINARY"

// Rindabench returns the rindabench executable (the demo and benchmarks,
// cmd/rindabench): $RINDA_TEST_BENCH_BINARY when set, else a fresh build
// of this tree into dir, beside a rindactl (Rindactl) it runs the ticks of.
func Rindabench(dir string) (string, error) {
	if bin := os.Getenv(BenchBinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", BenchBinaryEnv, err)
		}
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctl, err := Rindactl(dir)
	if err != nil {
		return "", err
	}
	if beside := filepath.Join(dir, "rindactl"); ctl != beside {
		if err := os.Symlink(ctl, beside); err != nil {
			return "", err
		}
	}
	bin := filepath.Join(dir, "rindabench")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/rindactl/rindactl/cmd/rindabench").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}
