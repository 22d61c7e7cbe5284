package main

import (
	"context"
	"testing"

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
	ios, _, out, errOut := cliio.Test()
	f := newFactory(ios, func(k string) string { return env[k] })
	code := execute(context.Background(), f, args)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}
