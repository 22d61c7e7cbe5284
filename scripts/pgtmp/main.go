// Command pgtmp runs a command against a throwaway Postgres cluster:
//
//	go run ./scripts/pgtmp run -- go test ./...
//
// It starts a cluster from the machine's Postgres binaries (see
// internal/pgtmp), exports DATABASE_URL to the command, and removes the
// cluster when the command ends. `start` keeps one running until Ctrl-C.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/rindactl/rindactl/internal/pgtmp"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 || (args[0] != "run" && args[0] != "start") {
		fmt.Fprintln(os.Stderr, "usage: scripts/pg run -- COMMAND [ARGS...] | scripts/pg start")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := pgtmp.Start(ctx, pgtmp.Options{
		InstallIfMissing: os.Getenv("CI") != "",
		Log:              func(f string, a ...any) { fmt.Fprintf(os.Stderr, "pg: "+f+"\n", a...) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pg:", err)
		return 1
	}
	defer c.Stop()

	if args[0] == "start" {
		fmt.Printf("export DATABASE_URL=%s\n", c.URL)
		fmt.Fprintln(os.Stderr, "pg: running; press Ctrl-C to stop and remove it")
		<-ctx.Done()
		return 0
	}
	cmdArgs := args[1:]
	if len(cmdArgs) > 0 && cmdArgs[0] == "--" {
		cmdArgs = cmdArgs[1:]
	}
	if len(cmdArgs) == 0 {
		fmt.Fprintln(os.Stderr, "pg: run needs a command after --")
		return 2
	}
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "DATABASE_URL="+c.URL)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "pg:", err)
		return 1
	}
	// The child is in our process group and gets Ctrl-C itself; we only
	// wait for it, then tear the cluster down.
	go func() {
		<-ctx.Done()
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pg:", err)
		return 1
	}
	return 0
}
