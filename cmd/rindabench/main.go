// Command rindabench holds what rindactl does not ship: the incident demo
// and the benchmarks, with the in-process stand-ins they start (throwaway
// Postgres, SMTP and IMAP servers, provider stand-ins). It runs rindactl's
// ticks as child processes: the rindactl beside it, else the one on PATH.
// `rindactl demo` and `rindactl bench ...` run this binary (issue 41).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rindactl/rindactl/internal/cliio"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, newFactory(cliio.System(), os.Getenv), os.Args[1:])
	stop()
	os.Exit(code)
}
