package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
)

// addOutputFlag registers -o/--output: text (the default) or json. status,
// whose default is a table, registers its own.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
}

// parseOutput reads --output as text or json; anything else is a usage
// error (exit 2).
func parseOutput(value string) (cliio.Format, error) {
	format, err := cliio.ParseFormat(value, cliio.FormatText, cliio.FormatJSON)
	if err != nil {
		return "", usageError("%v", err)
	}
	return format, nil
}

// ListOptions holds the flags of a list command without filters
// (breaker list, workspace list).
type ListOptions struct {
	f      *Factory
	Output string
}

// listCommand completes a list command: it takes no arguments, has
// --output, and runs run in the format asked for.
func listCommand(cmd *cobra.Command, output *string, run func(context.Context, cliio.Format) error) *cobra.Command {
	cmd.Args = exactArgs(0, "none")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		format, err := parseOutput(*output)
		if err != nil {
			return err
		}
		return run(cmd.Context(), format)
	}
	addOutputFlag(cmd, output)
	return cmd
}

// listRun is the body of a list command: it loads the rows and prints them
// in format as list shows them.
func listRun[T any](ctx context.Context, f *Factory, format cliio.Format, load func(context.Context, store.DBTX) ([]T, error), list cliio.List[T]) error {
	pool, err := f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	if list.Rows, err = load(ctx, pool); err != nil {
		return err
	}
	return cliio.WriteList(f.IO, format, list)
}
