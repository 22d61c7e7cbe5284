package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
)

// MigrateOptions holds the flags and clients of `rindactl migrate`.
type MigrateOptions struct {
	f      *Factory
	Status bool
	Output string
}

func newCmdMigrate(f *Factory) *cobra.Command {
	opts := &MigrateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "migrate [status]",
		Short: "Apply the embedded schema migrations (safe to run concurrently)",
		Long: `Apply every pending schema migration embedded in this binary.

Migrations take a Postgres advisory lock, so several hosts may run
"rindactl migrate" at the same moment; running it again is a no-op.
"rindactl migrate status" lists every version and whether it is applied.`,
		Example: `  rindactl migrate
  rindactl migrate status --output json`,
		ValidArgs: []string{"status"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || (len(args) == 1 && args[0] != "status") {
				return usageError("unknown argument %q: use 'rindactl migrate' or 'rindactl migrate status'", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Status = len(args) == 1
			return migrateRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func migrateRun(ctx context.Context, opts *MigrateOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	ios := opts.f.IO

	if opts.Status {
		st, err := store.MigrationStatus(ctx, pool)
		if err != nil {
			return err
		}
		if format == cliio.FormatJSON {
			return ios.WriteJSON(map[string]any{"migrations": st})
		}
		t := cliio.Table{Headers: []string{"version", "state", "name"}, Whole: []int{0}}
		for _, s := range st {
			state := "pending"
			if s.Applied {
				state = "applied"
			}
			t.Rows = append(t.Rows, []string{fmt.Sprintf("%05d", s.Version), state, s.Name})
		}
		fmt.Fprintln(ios.Out, cliio.NewPainter(ios.Out, ios.ColorEnabled()).Table(t))
		return nil
	}

	applied, err := store.Migrate(ctx, pool)
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return ios.WriteJSON(map[string]any{"applied": applied})
	}
	if len(applied) == 0 {
		fmt.Fprintln(ios.Out, "schema is up to date; nothing to apply")
		return nil
	}
	for _, a := range applied {
		fmt.Fprintf(ios.Out, "applied %05d %s\n", a.Version, a.Name)
	}
	return nil
}
