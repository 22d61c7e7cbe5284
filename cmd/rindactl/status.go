package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/status"
)

// StatusOptions holds the flags and clients of `rindactl status`.
type StatusOptions struct {
	f         *Factory
	Overdue   bool
	Workspace string
	Campaign  string
	Output    string
	Watch     bool
	Interval  time.Duration
}

func newCmdStatus(f *Factory) *cobra.Command {
	opts := &StatusOptions{f: f}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what is queued, due, blocked and overdue, and why",
		Long: `Show the state of enrichment and email in one screen: leads by status,
what is due and what is blocked by what (open breaker, negative cache,
spend ceiling, rate limit); overdue sequence steps per mailbox and campaign,
kept apart from steps that cannot go out (no email, paused mailbox, outside
the sending window); breakers; the last ticks; this month's spend.

--overdue shows only the late backlog with an estimated drain time from
the mailboxes' remaining daily caps and the email tick cadence.

--watch redraws a compact live view (overdue, sent per minute, open
breakers, paused mailboxes, ticks) every --interval in 80 columns until
Ctrl-C; when stdout is not a terminal, frames follow one another.

--output json prints one document with the keys generated_at, enrich,
email, breakers, ticks and spend.`,
		Example: `  rindactl status
  rindactl status --overdue
  rindactl status --workspace acme --campaign q3-outbound
  rindactl status --watch --interval 5s
  rindactl status --output json | jq .email.overdue`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return statusRun(cmd.Context(), opts) },
	}
	cmd.Flags().BoolVar(&opts.Overdue, "overdue", false, "focus on the late backlog and its drain time")
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "only this workspace (by name)")
	cmd.Flags().StringVar(&opts.Campaign, "campaign", "", "only this campaign's email backlog (by name)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "table", "output format: table (or text) or json")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "redraw a live view until Ctrl-C")
	cmd.Flags().DurationVar(&opts.Interval, "interval", statusIntervalDefault, "time between --watch redraws")
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	// text is accepted like on every other command: status's text is its table.
	format, err := cliio.ParseFormat(opts.Output, cliio.FormatTable, cliio.FormatText, cliio.FormatJSON)
	if err != nil {
		return usageError("%v", err)
	}
	filter := status.Filter{Workspace: opts.Workspace, Campaign: opts.Campaign, EmailOnly: opts.Overdue && format != cliio.FormatJSON}
	if opts.Watch {
		if format == cliio.FormatJSON || opts.Overdue || opts.Interval < statusIntervalMin {
			return usageError("--watch draws its own view: leave out --output json and --overdue, and give --interval of at least %s", statusIntervalMin)
		}
		return statusWatch(ctx, opts, filter)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	rep, err := status.Build(ctx, pool, opts.f.Now(), filter)
	var filterErr *status.FilterError
	if errors.As(err, &filterErr) {
		return usageError("%v", err)
	}
	if err != nil {
		return err
	}
	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	return status.WriteTable(ios.Out, rep, status.TableOptions{Color: ios.ColorEnabled(), Overdue: opts.Overdue})
}
