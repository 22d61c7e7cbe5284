package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
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
		newCmdBreakerList(f, nil), newCmdBreakerReset(f, nil), newCmdBreakerOpen(f, nil))
}

// BreakerListOptions holds the flags of `rindactl breaker list`.
type BreakerListOptions struct {
	f      *Factory
	Output string
}

func newCmdBreakerList(f *Factory, runF func(context.Context, *BreakerListOptions) error) *cobra.Command {
	opts := &BreakerListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List breakers and their state",
		Long: `List every breaker: state (closed, open, half_open), until when, why, the
current failure streak and the episode number (one alert per episode).`,
		Example: `  rindactl breaker list
  rindactl breaker list --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return breakerListRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func breakerListRun(ctx context.Context, opts *BreakerListOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	rows, err := store.Breakers(ctx, pool)
	if err != nil {
		return err
	}
	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(map[string]any{"breakers": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintln(ios.Out, "no breakers yet: every provider is closed (calls allowed)")
		return nil
	}
	now := opts.f.Now()
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tPROVIDER\tSTATE\tUNTIL\tREASON\tFAILURES\tEPISODE")
	for _, b := range rows {
		state, until := b.State, "-"
		if b.OpenUntil != nil {
			until = cliio.Stamp(*b.OpenUntil)
			if b.State == "open" && !b.OpenUntil.After(now) {
				state = "open (expired: next call probes)"
			}
		}
		reason := "-"
		if b.Reason != nil {
			reason = *b.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", b.Workspace, b.Provider, state, until, reason, b.ConsecutiveFailures, b.Episode)
	}
	return tw.Flush()
}

// BreakerTarget names one breaker on the command line.
type BreakerTarget struct {
	Workspace string
	Provider  string
}

func (t BreakerTarget) validate(cmd string) error {
	if t.Workspace == "" || t.Provider == "" {
		return usageError("%s needs --workspace and --provider, e.g. --workspace acme --provider findymail", cmd)
	}
	return nil
}

// BreakerResetOptions holds the flags of `rindactl breaker reset`.
type BreakerResetOptions struct {
	f *Factory
	BreakerTarget
}

func newCmdBreakerReset(f *Factory, runF func(context.Context, *BreakerResetOptions) error) *cobra.Command {
	opts := &BreakerResetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Close a breaker now",
		Long: `Close a breaker now (e.g. after buying more credits), so the next tick calls
the provider again. Writes breaker_closed and an audit log row.`,
		Example: `  rindactl breaker reset --workspace acme --provider findymail`,
		Args:    exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return breakerResetRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "workspace name")
	cmd.Flags().StringVarP(&opts.Provider, "provider", "p", "", "provider name (findymail, hunter, millionverifier)")
	return cmd
}

func breakerResetRun(ctx context.Context, opts *BreakerResetOptions) error {
	if err := opts.validate("breaker reset"); err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	var closed bool
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ws, err := workspaceID(ctx, tx, opts.Workspace)
		if err != nil {
			return err
		}
		if closed, err = guard.ResetBreaker(ctx, tx, ws, opts.Provider, "reset by "+actor(opts.f)); err != nil {
			return err
		}
		_, err = store.InsertAudit(ctx, tx, actor(opts.f), "breaker.reset",
			map[string]any{"workspace": opts.Workspace, "provider": opts.Provider}, boolCount(closed))
		return err
	})
	if err != nil {
		return err
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
	BreakerTarget
	For    time.Duration
	Reason string
}

func newCmdBreakerOpen(f *Factory, runF func(context.Context, *BreakerOpenOptions) error) *cobra.Command {
	opts := &BreakerOpenOptions{f: f}
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Open a breaker for a while (a quota you know is gone)",
		Long: `Open a breaker for --for, so no tick on any host calls that provider for that
workspace until then (e.g. you know the plan's credits are gone). Writes
breaker_opened and an audit log row. After the window one call probes.`,
		Example: `  rindactl breaker open --workspace acme --provider findymail --for 1h`,
		Args:    exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return breakerOpenRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "workspace name")
	cmd.Flags().StringVarP(&opts.Provider, "provider", "p", "", "provider name (findymail, hunter, millionverifier)")
	cmd.Flags().DurationVar(&opts.For, "for", 0, "how long to keep it open, e.g. 30m or 24h")
	cmd.Flags().StringVar(&opts.Reason, "reason", "manual", "why, shown in breaker list and the alert")
	return cmd
}

func breakerOpenRun(ctx context.Context, opts *BreakerOpenOptions) error {
	if err := opts.validate("breaker open"); err != nil {
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
	var until time.Time
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ws, err := workspaceID(ctx, tx, opts.Workspace)
		if err != nil {
			return err
		}
		if until, err = guard.OpenBreaker(ctx, tx, ws, opts.Provider, opts.For, opts.Reason); err != nil {
			return err
		}
		_, err = store.InsertAudit(ctx, tx, actor(opts.f), "breaker.open",
			map[string]any{"workspace": opts.Workspace, "provider": opts.Provider, "for": opts.For.String(), "reason": opts.Reason}, 1)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.f.IO.Out, "opened the %s breaker of workspace %s until %s\n", opts.Provider, opts.Workspace, cliio.Stamp(until))
	return nil
}

// workspaceID resolves a workspace name; an unknown one is a usage error.
func workspaceID(ctx context.Context, db store.DBTX, name string) (int64, error) {
	id, err := store.WorkspaceID(ctx, db, name)
	if errors.Is(err, store.ErrNoWorkspace) {
		return 0, usageError("unknown workspace %q: see 'rindactl workspace list'", name)
	}
	return id, err
}

func boolCount(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
