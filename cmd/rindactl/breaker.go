package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
)

func newCmdBreaker(f *Factory) *cobra.Command {
	return groupCommand("breaker", "List, open or reset provider circuit breakers per workspace",
		`Circuit breakers per (workspace, provider) stop all calls to a provider that ran
out of quota (or failed repeatedly), on every host. After the window one caller
probes; success closes the breaker, failure re-opens it.`,
		newCmdBreakerList(f), newCmdBreakerReset(f), newCmdBreakerOpen(f))
}

func newCmdBreakerList(f *Factory) *cobra.Command {
	opts := &ListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List breakers and their state",
		Long: `List every breaker: state (closed, open, half_open), until when, why, the
current failure streak and the episode number (one alert per episode). A
breaker shown "expired" is open past its window: the next call probes it.
The table fits 80 columns; reasons and episodes follow it, whole.`,
		Example: `  rindactl breaker list
  rindactl breaker list --output json`,
	}
	return listCommand(cmd, &opts.Output, func(ctx context.Context, format cliio.Format) error { return breakerListRun(ctx, opts, format) })
}

func breakerListRun(ctx context.Context, opts *ListOptions, format cliio.Format) error {
	now := opts.f.Now()
	return listRun(ctx, opts.f, format, store.Breakers, cliio.List[store.BreakerRow]{Key: "breakers",
		Empty:   "no breakers yet: every provider is closed (calls allowed)",
		Header:  []string{"workspace", "provider", "state", "until", "failures"},
		Numeric: []int{4}, Whole: []int{2, 3},
		Cells: func(b store.BreakerRow) []string {
			state, until := b.State, "-"
			if b.OpenUntil != nil {
				until = cliio.Stamp(*b.OpenUntil)
				if b.State == "open" && !b.OpenUntil.After(now) {
					state = "expired" // open past its window
				}
			}
			return []string{b.Workspace, b.Provider, state, until, cliio.Thousands(int64(b.ConsecutiveFailures))}
		},
		// As in status: the reason whole, under the table.
		Note: func(b store.BreakerRow) string {
			if b.Reason == nil || *b.Reason == "" {
				return ""
			}
			return fmt.Sprintf("%s %s breaker, episode %s: %s", b.Workspace, b.Provider, cliio.Thousands(b.Episode), *b.Reason)
		}})
}

// addBreakerTargetFlags registers --workspace and --provider, which name
// the breaker reset and open act on.
func addBreakerTargetFlags(cmd *cobra.Command, t *guard.BreakerTarget) {
	cmd.Flags().StringVarP(&t.Workspace, "workspace", "w", "", "workspace name")
	cmd.Flags().StringVarP(&t.Provider, "provider", "p", "", "provider name (findymail, hunter, millionverifier)")
}

func validateBreakerTarget(t guard.BreakerTarget, cmd string) error {
	if t.Workspace == "" || t.Provider == "" {
		return usageError("%s needs --workspace and --provider, e.g. --workspace acme --provider findymail", cmd)
	}
	return nil
}

// BreakerResetOptions holds the flags of `rindactl breaker reset`.
type BreakerResetOptions struct {
	f *Factory
	guard.BreakerTarget
}

func newCmdBreakerReset(f *Factory) *cobra.Command {
	opts := &BreakerResetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Close a breaker now",
		Long: `Close a breaker now (e.g. after buying more credits), so the next tick calls
the provider again. Writes breaker_closed and an audit log row.`,
		Example: `  rindactl breaker reset --workspace acme --provider findymail`,
		Args:    exactArgs(0, "none"),
		RunE:    func(cmd *cobra.Command, args []string) error { return breakerResetRun(cmd.Context(), opts) },
	}
	addBreakerTargetFlags(cmd, &opts.BreakerTarget)
	return cmd
}

func breakerResetRun(ctx context.Context, opts *BreakerResetOptions) error {
	if err := validateBreakerTarget(opts.BreakerTarget, "breaker reset"); err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	closed, err := opts.BreakerTarget.Reset(ctx, pool, actor(opts.f))
	if err != nil {
		return unknownWorkspace(err, opts.Workspace)
	}
	if closed {
		fmt.Fprintf(opts.f.IO.Out, "closed the %s breaker of workspace %s: the next tick calls it again\n", opts.Provider, opts.Workspace)
	} else {
		fmt.Fprintf(opts.f.IO.Out, "the %s breaker of workspace %s was already closed\n", opts.Provider, opts.Workspace)
	}
	return nil
}

// BreakerOpenOptions holds the flags of `rindactl breaker open`.
type BreakerOpenOptions struct {
	f *Factory
	guard.BreakerTarget
	For    time.Duration
	Reason string
}

func newCmdBreakerOpen(f *Factory) *cobra.Command {
	opts := &BreakerOpenOptions{f: f}
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open a breaker for a while (a quota you know is gone)",
		Long: `Open a breaker for --for, so no tick on any host calls that provider for that
workspace until then (e.g. you know the plan's credits are gone). Writes
breaker_opened and an audit log row. After the window one call probes.`,
		Example: `  rindactl breaker open --workspace acme --provider findymail --for 1h`,
		Args:    exactArgs(0, "none"),
		RunE:    func(cmd *cobra.Command, args []string) error { return breakerOpenRun(cmd.Context(), opts) },
	}
	addBreakerTargetFlags(cmd, &opts.BreakerTarget)
	cmd.Flags().DurationVar(&opts.For, "for", 0, "how long to keep it open, e.g. 30m or 24h")
	cmd.Flags().StringVar(&opts.Reason, "reason", "manual", "why, shown in breaker list and the alert")
	return cmd
}

func breakerOpenRun(ctx context.Context, opts *BreakerOpenOptions) error {
	if err := validateBreakerTarget(opts.BreakerTarget, "breaker open"); err != nil {
		return err
	}
	if opts.For <= 0 || opts.For > 365*24*time.Hour {
		return usageError("breaker open needs --for with a positive duration up to a year, e.g. --for 1h")
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	until, err := opts.BreakerTarget.Open(ctx, pool, opts.For, opts.Reason, actor(opts.f))
	if err != nil {
		return unknownWorkspace(err, opts.Workspace)
	}
	fmt.Fprintf(opts.f.IO.Out, "opened the %s breaker of workspace %s until %s\n", opts.Provider, opts.Workspace, cliio.Stamp(until))
	return nil
}
