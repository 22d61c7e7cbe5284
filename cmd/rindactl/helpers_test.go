package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rindactl/rindactl/internal/cliio"
)

// cliResult is what one command line printed and returned.
type cliResult struct {
	code   int
	stdout string
	stderr string
}

// runCLI runs a command line in-process with the given environment.
func runCLI(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	return runCLIIn(t, env, "", args...)
}

// runCLIIn runs a command line in-process with stdin piped in.
func runCLIIn(t *testing.T, env map[string]string, stdin string, args ...string) cliResult {
	t.Helper()
	ios, in, out, errOut := cliio.Test()
	in.WriteString(stdin)
	f := newFactory(ios, func(k string) string { return env[k] })
	f.rindabench = builtRindabench
	code := execute(context.Background(), f, args)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

func lines(s string) int { return bytes.Count([]byte(s), []byte("\n")) }

// readMetricsFile parses a Prometheus textfile, failing the test when it is
// not valid text format.
func readMetricsFile(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("metrics file is not valid Prometheus text: %v", err)
	}
	return families
}
