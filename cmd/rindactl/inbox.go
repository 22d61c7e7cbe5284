package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/inbox"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func newCmdInbox(f *Factory) *cobra.Command {
	return groupCommand("inbox", "Replies and bounces: run one bounded inbox-reading tick",
		"Read the mailboxes' INBOXes over IMAP and end the sequences that got a reply or bounced.",
		newCmdInboxTick(f))
}

// InboxTickOptions holds the flags of `rindactl inbox tick`.
type InboxTickOptions struct {
	f *Factory
	tickBounds
	tickOutputs
}

func newCmdInboxTick(f *Factory) *cobra.Command {
	opts := &InboxTickOptions{f: f}
	cmd := &cobra.Command{
		Use:   "tick",
		Short: "Read each mailbox's new INBOX messages, end replied, unsubscribed and bounced sequences, exit",
		Long: `Read the INBOX of every mailbox with an imap_url (password from its
password_env; TLS unless the server is on loopback), from where the last
tick left off (a UIDVALIDITY/UID checkpoint per mailbox), at most --batch
messages each, and stop at --max-duration. Messages are only peeked at:
they stay unread.

A reply (In-Reply-To or References naming a message this mailbox sent)
ends its sequence as replied, or as unsubscribed (address suppressed) when
its first lines ask to stop; out-of-office answers do not. A delivery status
notification (RFC 3464, multipart/report at the top level) ends a sequence
only when it is about one of our sends: by the returned original's
Message-ID, by a VERP return path (verp: true), or by a failed recipient this
mailbox mailed in the last 30 days; a permanent failure (5.x.x) also
suppresses that address. A report naming more than 5 addresses the mailbox
never mailed is ignored (inbox_suspicious event). A message that cannot be
processed is recorded as skipped (see 'rindactl why mailbox ADDRESS') and
never blocks the mailbox. Too many hard bounces pause the mailbox (the
campaign's bounce_guard).

Every IMAP read ends with the session: 1s after --max-duration, and within
the mailbox's --lease. Any number of ticks may run at once: each mailbox is
leased to one. A mailbox that cannot be read is recorded and the tick exits
1 after reading the others.`,
		Example: `  rindactl inbox tick
  rindactl inbox tick --batch 200 --max-duration 50s --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Batch <= 0 || opts.MaxDuration <= 0 {
				return usageError("--batch and --max-duration must be positive")
			}
			opts.LeaseSet = cmd.Flags().Changed("lease")
			if err := opts.fitLease(inboxGrace); err != nil {
				return err
			}
			return inboxTickRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Batch, "batch", inbox.TickBatchDefault, "messages read per mailbox")
	cmd.Flags().DurationVar(&opts.MaxDuration, "max-duration", inbox.TickMaxDurationDefault, "stop reading after this long")
	cmd.Flags().DurationVar(&opts.Lease, "lease", inbox.TickLeaseDefault, leaseFlagHelp(inboxGrace.What))
	opts.tickOutputs.register(cmd)
	return cmd
}

// inboxGrace is how long an IMAP session begun before --max-duration may
// still hold its mailbox.
var inboxGrace = tick.Grace{Duration: inbox.TickSessionGraceDefault, What: "the " + inbox.TickSessionGraceDefault.String() + " IMAP session grace"}

func inboxTickRun(ctx context.Context, opts *InboxTickOptions) error {
	m := metrics.NewMetrics()
	return tickRun(ctx, opts.f, tickkind.Inbox, opts.tickBounds, opts.tickOutputs, m, func(ctx context.Context, pool *pgxpool.Pool) (*inbox.TickReport, error) {
		rep, err := inbox.RunTick(ctx, pool, inbox.TickOptions{
			Batch: opts.Batch, MaxDuration: opts.MaxDuration, Lease: opts.Lease, Logger: opts.f.Logger(),
			LookupEnv: opts.f.LookupEnv,
		})
		if rep != nil {
			m.ObserveOutcomes(string(tickkind.Inbox), rep.Outcomes)
		}
		return rep, err
	}, func(rep *inbox.TickReport) {
		fmt.Fprintf(opts.f.IO.Out, "read %s messages from %s mailboxes in %dms\n", cliio.Thousands(rep.Messages), cliio.Thousands(rep.Mailboxes), rep.DurationMS)
		fmt.Fprintf(opts.f.IO.Out, "outcomes: %s\n", cliio.Counts(rep.Outcomes, "=", " "))
		for _, s := range rep.Skipped {
			fmt.Fprintf(opts.f.IO.Out, "skipped %s UID %d: %s\n", s.Mailbox, s.UID, s.Reason)
		}
	})
}
