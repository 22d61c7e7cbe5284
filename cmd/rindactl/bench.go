package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// The demo and the benchmarks start test servers (a throwaway Postgres,
// SMTP and IMAP stand-ins, provider stand-ins): they live in their own
// binary, cmd/rindabench, so rindactl ships without them (issue 41).
// `rindactl demo` and `rindactl bench ...` run the rindabench beside this
// executable (make build puts both in bin/), else the one on PATH, with the
// same arguments, standard streams and exit code.

func newCmdDemo(f *Factory) *cobra.Command {
	return rindabenchCommand(f, "demo", "Replay the incident end to end on a throwaway Postgres (runs rindabench)")
}

// benchCommands are rindabench's bench subcommands: named here so that
// `rindactl bench` without one lists them and exits 2, as every group does
// (TestExitCodeTable runs each through rindabench).
var benchCommands = []struct{ name, short string }{
	{"claim", "Time claim -> no-op provider -> record over N due leads"},
	{"email", "Time sending N steps into an in-process SMTP server, against a bare go-mail loop"},
	{"history", "The claims and the email drain beside a year of history, before and after prune"},
	{"width", "Run 1, 2, 4, 8 and 16 tick processes at once"},
	{"storm", "The incident's enrichment storm against stand-ins"},
	{"incident", "Email's rate alone and beside the storm, as interleaved pairs"},
}

func newCmdBench(f *Factory) *cobra.Command {
	var subs []*cobra.Command
	for _, c := range benchCommands {
		subs = append(subs, rindabenchCommand(f, c.name, c.short+" (runs rindabench)", "bench"))
	}
	return groupCommand("bench", "Measure the claim pipeline and email drain on this machine (runs rindabench)",
		`The benchmarks are the rindabench binary (cmd/rindabench), which "make
build" builds beside rindactl; "rindactl bench claim ARGS" runs
"rindabench bench claim ARGS". docs/benchmarks.md has the figures.`, subs...)
}

func rindabenchCommand(f *Factory, name, short string, parents ...string) *cobra.Command {
	path := strings.Join(append(parents, name), " ")
	return &cobra.Command{
		Use:   name,
		Short: short,
		Long: short + `

rindactl does not ship the demo and the benchmarks: they are the rindabench
binary (cmd/rindabench), which "make build" builds beside rindactl.
"rindactl ` + path + ` ARGS" runs "rindabench ` + path + ` ARGS"; "rindactl ` + path + ` --help"
shows its help.`,
		// Every argument, --help included, is rindabench's.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRindabench(cmd, f, append(append(parents, name), args...))
		},
	}
}

// runRindabench runs rindabench with args; its exit code is ours. Only the
// database URL this process was given reaches it (as DATABASE_URL).
func runRindabench(cmd *cobra.Command, f *Factory, args []string) error {
	bin, err := f.rindabench()
	if err != nil {
		return err
	}
	child := exec.CommandContext(cmd.Context(), bin, args...)
	child.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "DATABASE_URL=") })
	if url := f.Getenv("DATABASE_URL"); url != "" {
		child.Env = append(child.Env, "DATABASE_URL="+url)
	}
	child.Stdin, child.Stdout, child.Stderr = f.IO.In, f.IO.Out, f.IO.ErrOut
	// SIGTERM to rindactl reaches rindabench as SIGTERM: it stops its ticks
	// and stand-ins and removes what it made.
	child.Cancel = func() error { return child.Process.Signal(syscall.SIGTERM) }
	child.WaitDelay = time.Minute
	err = child.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return &silentError{code: exit.ExitCode()}
	}
	return err
}

// findRindabench is the rindabench beside this executable, else on PATH.
func findRindabench() (string, error) {
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "rindabench")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if bin, err := exec.LookPath("rindabench"); err == nil {
		return bin, nil
	}
	return "", usageError("the demo and the benchmarks are the rindabench binary, not found beside rindactl or on PATH: " +
		"build it with `go build -o bin/rindabench ./cmd/rindabench` (make build builds both)")
}
