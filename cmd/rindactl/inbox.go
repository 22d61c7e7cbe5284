package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/inbox"
	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func newCmdInbox(f *Factory) *cobra.Command {
	return groupCommand("inbox", "Replies and bounces: run one bounded inbox-reading tick",
		"Read the mailboxes' INBOXes over IMAP and end the sequences that got a reply or bounced.")
}

// inboxTick is the inbox-reading tick kind: replies, unsubscribe requests
// and bounces over IMAP.
func inboxTick() tickCommand {
	return &tickSpec[inbox.TickReport]{
		kind: tickkind.Inbox,
		cmd: &cobra.Command{
			Use:   "tick",
			Short: "Read each mailbox's new INBOX messages, end replied, unsubscribed and bounced sequences, exit",
			Long: `Read the INBOX of every mailbox with an imap_url (password from its
password_env; TLS unless the server is on loopback), from where the last
tick left off (a UIDVALIDITY/UID checkpoint per mailbox, moved only past
messages the server returned; after a new UIDVALIDITY, found again by
date), at most --batch messages each, half of them the newest when more
wait, and stop at --max-duration. Messages are only peeked at: they stay
unread.

A reply (In-Reply-To or References naming a message this mailbox sent)
ends its sequence as replied, or as unsubscribed (address suppressed) when
its first lines ask to stop. Automatic mail (Auto-Submitted, Precedence
auto_reply/bulk/junk/list, X-Auto-Response-Suppress, X-Autoreply,
X-Autorespond, a null Return-Path, List-Id or List-Unsubscribe) never does:
it is counted as auto_reply. A delivery status notification (RFC 3464,
multipart/report at the top level) ends a sequence only when it proves it
answers that send: by a VERP return path whose MAC verifies (verp: true), or
by naming the send's Message-ID (returned original, Original-Message-ID,
In-Reply-To, References) and failing the recipient that send went to; a
permanent failure (5.x.x) also suppresses that address. A Final-Recipient
alone proves nothing: such a report is recorded as unmatched (listed here
and by 'rindactl why mailbox ADDRESS'), ends nothing and counts toward no
bounce rate; naming more than 5 addresses the mailbox never mailed it also
raises inbox_suspicious. A message that cannot be
processed is recorded as skipped (see 'rindactl why mailbox ADDRESS') and
never blocks the mailbox. Too many hard bounces pause the mailbox (the
campaign's bounce_guard).

Every IMAP read ends with the session: 1s after --max-duration, and within
the mailbox's --lease. A server whose line, literal or answer passes its
cap (docs/email.md) is dropped and its mailbox reported. Any number of ticks may run at once: each mailbox is
leased to one. A mailbox that cannot be read is recorded and the tick exits
1 after reading the others.`,
			Example: `  rindactl inbox tick
  rindactl inbox tick --batch 200 --max-duration 50s --output json`,
		},
		bounds: tickBoundSpecs{
			Batch:       &intBound{Default: inbox.TickBatchDefault, Max: tickBatchMax, Help: "messages read per mailbox"},
			MaxDuration: durationBound{Default: inbox.TickMaxDurationDefault, Help: "stop reading after this long"},
			// An IMAP session begun before --max-duration may still hold
			// its mailbox this long.
			Lease: &leaseBound{Default: inbox.TickLeaseDefault, Grace: tick.Grace{
				Duration: inbox.TickSessionGraceDefault, What: "the " + inbox.TickSessionGraceDefault.String() + " IMAP session grace"}},
		},
		work: func(ctx context.Context, t *tickEnv) (*inbox.TickReport, error) {
			return inbox.RunTick(ctx, t.Pool, inbox.TickOptions{
				Batch: t.Batch, MaxDuration: t.MaxDuration, Lease: t.Lease, Logger: t.f.Logger(), LookupEnv: t.f.LookupEnv,
				Tokens: mailauth.NewTokensFromEnv(t.Pool, t.f.Getenv, mailauth.Options{LookupEnv: t.f.LookupEnv}),
			})
		},
		counts: func(rep *inbox.TickReport) map[string]int { return rep.Outcomes },
		text: func(ios *cliio.IO, rep *inbox.TickReport) {
			fmt.Fprintf(ios.Out, "read %s messages from %s mailboxes in %dms\n", cliio.Thousands(rep.Messages), cliio.Thousands(rep.Mailboxes), rep.DurationMS)
			fmt.Fprintf(ios.Out, "outcomes: %s\n", cliio.Counts(rep.Outcomes, "=", " "))
			for _, s := range rep.Skipped {
				fmt.Fprintf(ios.Out, "skipped %s UID %d: %s\n", s.Mailbox, s.UID, s.Reason)
			}
			for _, u := range rep.Unmatched {
				fmt.Fprintf(ios.Out, "unmatched %s UID %d: %s\n", u.Mailbox, u.UID, u.Reason)
			}
		},
	}
}
