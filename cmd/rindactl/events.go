package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/guard"
	"github.com/rindactl/rindactl/internal/store"
)

func newCmdEvents(f *Factory) *cobra.Command {
	return groupCommand("events", "Domain events (quota_exhausted, breaker_opened, ...): list and deliver to Slack",
		`Domain events are written to an outbox in the same transaction as the state
change and posted once each to the Slack incoming webhook in
`+guard.SlackWebhookEnv+`. Ticks deliver at their end; failed posts are
retried later with backoff.`,
		newCmdEventsList(f, nil), newCmdEventsDeliver(f, nil))
}

// EventsListOptions holds the flags of `rindactl events list`.
type EventsListOptions struct {
	f           *Factory
	Limit       int
	Undelivered bool
	Output      string
}

func newCmdEventsList(f *Factory, runF func(context.Context, *EventsListOptions) error) *cobra.Command {
	opts := &EventsListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List recent events and their delivery state",
		Example: `  rindactl events list
  rindactl events list --undelivered --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return eventsListRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "show at most this many, newest first")
	cmd.Flags().BoolVar(&opts.Undelivered, "undelivered", false, "only alerts not yet posted")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func eventsListRun(ctx context.Context, opts *EventsListOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if opts.Limit < 1 || opts.Limit > 10000 {
		return usageError("invalid --limit %d: use 1 to 10000", opts.Limit)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	rows, err := store.Events(ctx, pool, opts.Limit, opts.Undelivered)
	if err != nil {
		return err
	}
	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(map[string]any{"events": rows})
	}
	if len(rows) == 0 {
		fmt.Fprintln(ios.Out, "no events")
		return nil
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tKIND\tWORKSPACE\tPROVIDER\tDELIVERY")
	for _, e := range rows {
		var delivery string
		switch {
		case e.DeliveredAt != nil:
			delivery = "delivered " + e.DeliveredAt.UTC().Format(time.RFC3339)
		case !e.Alert:
			delivery = "not posted (the episode's alert was)"
		case e.Attempts == 0:
			delivery = "pending"
		default:
			delivery = fmt.Sprintf("retry at %s (%d failed: %s)", e.NextAttemptAt.UTC().Format(time.RFC3339), e.Attempts, e.LastError)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.CreatedAt.UTC().Format(time.RFC3339), e.Kind, e.Workspace, e.Provider, delivery)
	}
	return tw.Flush()
}

// EventsDeliverOptions holds the flags of `rindactl events deliver`.
type EventsDeliverOptions struct {
	f      *Factory
	Output string
}

func newCmdEventsDeliver(f *Factory, runF func(context.Context, *EventsDeliverOptions) error) *cobra.Command {
	opts := &EventsDeliverOptions{f: f}
	cmd := &cobra.Command{
		Use:   "deliver",
		Short: "Deliver pending events to the Slack webhook now",
		Long: `Post every due event to the Slack incoming webhook in ` + guard.SlackWebhookEnv + `,
once each, even with several deliverers running. Without a webhook the
events stay pending (see 'rindactl events list') and this exits 0.`,
		Example: `  RINDA_SLACK_WEBHOOK_URL=https://hooks.slack.com/services/... rindactl events deliver`,
		Args:    exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return eventsDeliverRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func eventsDeliverRun(ctx context.Context, opts *EventsDeliverOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	rep, err := guard.DeliverEvents(ctx, pool, opts.f.Getenv(guard.SlackWebhookEnv), guard.DeliverOptions{})
	if err != nil {
		return err
	}
	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	if rep.NoWebhook {
		fmt.Fprintf(ios.Out, "%s is not set: events stay pending (see 'rindactl events list')\n", guard.SlackWebhookEnv)
		return nil
	}
	fmt.Fprintf(ios.Out, "delivered %d event(s), %d failed (retried later with backoff)\n", rep.Delivered, rep.Failed)
	return nil
}
