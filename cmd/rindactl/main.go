// Command rindactl runs lead enrichment and cold-email sequences as short,
// bounded batch runs ("ticks") against Postgres. This package holds the
// cobra wiring only; the work lives under internal/.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rindactl/rindactl/internal/cliio"
)

func main() {
	// SIGTERM/SIGINT cancel the context: ticks stop claiming, finish or
	// release what they hold, and record their run.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, newFactory(cliio.System(), os.Getenv), os.Args[1:])
	stop()
	os.Exit(code)
}
