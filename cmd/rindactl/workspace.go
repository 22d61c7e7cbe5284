package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
)

func newCmdWorkspace(f *Factory) *cobra.Command {
	return groupCommand("workspace", "List workspaces, set their monthly USD ceiling or their own provider keys",
		`Workspaces own leads, campaigns, mailboxes and a monthly provider spend
ceiling. At the ceiling the workspace's enrichment makes no provider call until
the UTC month turns or the ceiling is raised; its leads wait, they do not fail.`,
		newCmdWorkspaceList(f), newCmdWorkspaceSet(f), newCmdWorkspaceSetKey(f))
}

func newCmdWorkspaceList(f *Factory) *cobra.Command {
	opts := &ListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List workspaces with their spend and ceiling",
		Long: `List every workspace with its monthly USD ceiling and this UTC month's
provider spend and calls: made (every call that went out, failed ones
included) and billed (those whose cost the ledger keeps), all this UTC month.`,
		Example: `  rindactl workspace list
  rindactl workspace list --output json`,
	}
	return listCommand(cmd, &opts.Output, func(ctx context.Context, format cliio.Format) error { return workspaceListRun(ctx, opts, format) })
}

func workspaceListRun(ctx context.Context, opts *ListOptions, format cliio.Format) error {
	return listRun(ctx, opts.f, format, store.WorkspaceSpends, cliio.List[store.WorkspaceSpend]{Key: "workspaces",
		Empty:   "no workspaces yet: 'rindactl import leads --workspace NAME FILE.csv' creates one",
		Header:  []string{"workspace", "ceiling usd", "spent usd (month)", "calls made", "calls billed"},
		Numeric: []int{1, 2, 3, 4},
		Cells: func(w store.WorkspaceSpend) []string {
			ceiling := "none"
			if w.MonthlyUSDCeiling != nil {
				ceiling = cliio.Decimal(*w.MonthlyUSDCeiling, 2)
			}
			return []string{w.Name, ceiling, cliio.Decimal(w.MonthSpentUSD, 4), cliio.Thousands(w.MonthCallsMade), cliio.Thousands(w.MonthCallsBilled)}
		}})
}

// WorkspaceSetOptions holds the flags of `rindactl workspace set`.
type WorkspaceSetOptions struct {
	f       *Factory
	Name    string
	Ceiling string
}

func newCmdWorkspaceSet(f *Factory) *cobra.Command {
	opts := &WorkspaceSetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "set NAME --monthly-usd-ceiling USD",
		Short: "Change a workspace's settings (e.g. --monthly-usd-ceiling)",
		Long: `Set a workspace's monthly USD ceiling for provider calls ("none" removes it).
Raising it lets blocked calls resume on the next tick. Writes an audit log row.`,
		Example: `  rindactl workspace set acme --monthly-usd-ceiling 250
  rindactl workspace set acme --monthly-usd-ceiling none`,
		Args: exactArgs(1, "the workspace name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			if !cmd.Flags().Changed("monthly-usd-ceiling") {
				return usageError("nothing to set: pass --monthly-usd-ceiling USD (or none)")
			}
			return workspaceSetRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Ceiling, "monthly-usd-ceiling", "", "monthly provider spend ceiling in USD, or none")
	return cmd
}

func workspaceSetRun(ctx context.Context, opts *WorkspaceSetOptions) error {
	var ceiling *float64
	if v := strings.TrimSpace(opts.Ceiling); !strings.EqualFold(v, "none") {
		usd, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || usd < 0 || usd >= 1e10 {
			return usageError("invalid --monthly-usd-ceiling %q: use dollars such as 250 or 99.50, or none", opts.Ceiling)
		}
		ceiling = &usd
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	w, err := store.SetWorkspaceCeiling(ctx, pool, opts.Name, ceiling, actor(opts.f))
	if err != nil {
		return unknownWorkspace(err, opts.Name)
	}
	if w.MonthlyUSDCeiling == nil {
		fmt.Fprintf(opts.f.IO.Out, "workspace %s: no monthly USD ceiling\n", w.Name)
	} else {
		fmt.Fprintf(opts.f.IO.Out, "workspace %s: monthly USD ceiling %s\n", w.Name, cliio.Decimal(*w.MonthlyUSDCeiling, 2))
	}
	return nil
}

// unknownWorkspace makes a workspace name that matches none a usage error
// (exit 2); other errors pass through.
func unknownWorkspace(err error, name string) error {
	if errors.Is(err, store.ErrNoWorkspace) {
		return usageError("unknown workspace %q: see 'rindactl workspace list'", name)
	}
	return err
}
