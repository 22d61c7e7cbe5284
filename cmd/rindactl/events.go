package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/events"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func newCmdEvents(f *Factory) *cobra.Command {
	return groupCommand("events", "Domain events (quota_exhausted, breaker_opened, ...): list and deliver to Slack",
		`Domain events are written to an outbox in the same transaction as the state
change and posted once each to the Slack incoming webhook in
`+events.SlackWebhookEnv+`. Ticks deliver at their end; failed posts are
retried later with backoff.`,
		newCmdEventsList(f))
}

// EventsListOptions holds the flags of `rindactl events list`.
type EventsListOptions struct {
	f           *Factory
	Limit       int
	Undelivered bool
	Output      string
}

func newCmdEventsList(f *Factory) *cobra.Command {
	opts := &EventsListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List recent events and their delivery state",
		Long: `List recent events, newest first, and their delivery state. The table fits
80 columns: a long delivery error is cut with an ellipsis; --output json
has it whole.`,
		Example: `  rindactl events list
  rindactl events list --undelivered --output json`,
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 50, "show at most this many, newest first")
	cmd.Flags().BoolVar(&opts.Undelivered, "undelivered", false, "only alerts not yet posted")
	return listCommand(cmd, &opts.Output, func(ctx context.Context, format cliio.Format) error { return eventsListRun(ctx, opts, format) })
}

func eventsListRun(ctx context.Context, opts *EventsListOptions, format cliio.Format) error {
	if opts.Limit < 1 || opts.Limit > 10000 {
		return usageError("invalid --limit %d: use 1 to 10000", opts.Limit)
	}
	load := func(ctx context.Context, db store.DBTX) ([]store.EventRow, error) {
		return store.Events(ctx, db, opts.Limit, opts.Undelivered)
	}
	return listRun(ctx, opts.f, format, load, cliio.List[store.EventRow]{Key: "events",
		Empty:   "no events",
		Header:  []string{"id", "created", "kind", "workspace", "provider", "delivery"},
		Numeric: []int{0}, Whole: []int{1, 2}, Flexible: []int{5},
		Cells: func(e store.EventRow) []string {
			var delivery string
			switch {
			case e.DeliveredAt != nil:
				delivery = "delivered " + cliio.Stamp(*e.DeliveredAt)
			case !e.Alert:
				delivery = "not posted (the episode's alert was)"
			case e.Attempts == 0:
				delivery = "pending"
			default:
				delivery = fmt.Sprintf("retry at %s (%d failed: %s)", cliio.Stamp(e.NextAttemptAt), e.Attempts, e.LastError)
			}
			return []string{fmt.Sprint(e.ID), cliio.Stamp(e.CreatedAt), e.Kind, e.Workspace, e.Provider, delivery}
		}})
}

// eventsTick is the events tick kind: the outbox posted to Slack.
func eventsTick() tickCommand {
	return &tickSpec[events.TickReport]{
		kind: tickkind.Events,
		cmd: &cobra.Command{
			Use:   "deliver",
			Short: "Deliver pending events to the Slack webhook now (a bounded tick)",
			Long: `Post every due event to the Slack incoming webhook in ` + events.SlackWebhookEnv + `,
once each, even with several deliverers running. Without a webhook the
events stay pending (see 'rindactl events list') and this exits 0.

Like the other ticks it is bounded: it claims no new batch after
--max-duration, stops on SIGTERM once the post in flight is recorded, and
records its run in tick_runs (kind events), which 'rindactl status' and
'rindactl doctor' read.`,
			Example: `  RINDA_SLACK_WEBHOOK_URL=https://hooks.slack.com/services/... rindactl events deliver
  rindactl events deliver --max-duration 50s --output json`,
		},
		bounds: tickBoundSpecs{
			MaxDuration: durationBound{Default: events.TickMaxDurationDefault, Help: "stop claiming events after this long"},
		},
		work: func(ctx context.Context, t *tickEnv) (*events.TickReport, error) {
			return events.RunTick(ctx, t.Pool, events.TickOptions{
				WebhookURL: t.f.Getenv(events.SlackWebhookEnv), MaxDuration: t.MaxDuration, Metrics: t.Metrics,
			})
		},
		counts:         (*events.TickReport).Counts,
		deliversEvents: true,
		text: func(ios *cliio.IO, rep *events.TickReport) {
			if rep.NoWebhook {
				fmt.Fprintf(ios.Out, "%s is not set: events stay pending (see 'rindactl events list')\n", events.SlackWebhookEnv)
				return
			}
			fmt.Fprintf(ios.Out, "delivered %s event(s), %s failed (retried later with backoff)\n",
				cliio.Thousands(int64(rep.Delivered)), cliio.Thousands(int64(rep.Failed)))
		},
	}
}
