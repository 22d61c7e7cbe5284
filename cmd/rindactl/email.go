package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/mailauth"
	"github.com/rindactl/rindactl/internal/metrics"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/status"
	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

func newCmdEmail(f *Factory) *cobra.Command {
	return groupCommand("email", "Sequence email: run one bounded sending tick",
		"Sequence email sends due campaign steps through the campaign's mailboxes.")
}

// emailTick is the sending tick kind: due sequence steps over each
// mailbox's SMTP connection.
func emailTick() tickCommand {
	return &tickSpec[sequence.TickReport]{
		kind: tickkind.Email,
		cmd: &cobra.Command{
			Use:   "tick",
			Short: "Claim a bounded batch of due sequence steps, send them, schedule the next, exit",
			Long: `Claim due sequence steps (FOR UPDATE SKIP LOCKED, with a lease), send them
over one SMTP connection per mailbox, record every outcome and schedule the
next step inside the sending window, then exit. Run it every minute from
cron or a systemd timer; any number may run at once.

A mailbox its provider limits (quota, throttling) is paused at its first
refusal, with a mailbox_paused event: it is not tried again this tick, and
its unsent step-1 leads move to healthy mailboxes. A paused mailbox is a
deliberate block, not a failure: the exit code is 0. So is a session the
server refuses (a 5xx to the greeting, EHLO/HELO, STARTTLS, AUTH or MAIL
FROM: a failed login, a refused sender) or a certificate this host does
not trust: the mailbox pauses an hour, no lead fails, and the first tick
after the pause picks up a fixed password or setting. No tick disables a
mailbox.

The greeting name (EHLO/HELO) is the mailbox's helo from the campaign
file, else RINDA_SMTP_HELO, else this host's fully qualified name, else an
address literal of the connection ([192.0.2.10]); never a bare host name,
which servers enforcing RFC 5321 refuse.

Each step is sent at most once: when the final dot of a message got no
answer, the step is delivery_unknown (status, why, events list) and no tick
sends it again; 'rindactl requeue --status=delivery_unknown' does, after you
checked the mailbox's Sent folder. Every SMTP phase (dial, greeting, each
command, DATA) has its own deadline and none runs past --max-duration plus
one second, so a hung server holds only its own mailbox. With
--metrics-file, per-mailbox sent/failed/deferred/delivery_unknown totals and
a paused gauge are written.

Every message carries List-Unsubscribe: a mailto: to its own mailbox
(which 'rindactl inbox tick' reads), and with RINDA_UNSUBSCRIBE_BASE_URL
set (where 'rindactl unsubscribe serve' is reached over https) an RFC 8058
one-click URL first; templates may show it as {{.UnsubscribeURL}}. See
docs/email.md.`,
			Example: `  rindactl email tick
  rindactl email tick --batch 500 --concurrency 18 --output json`,
		},
		bounds: tickBoundSpecs{
			Batch:       &intBound{Default: sequence.TickBatchDefault, Max: tickBatchMax, Help: "rows claimed per claim"},
			Concurrency: &intBound{Default: sequence.TickConcurrencyDefault, Max: tickConcurrencyMax, Help: "mailboxes sending at once"},
			MaxDuration: durationBound{Default: sequence.TickMaxDurationDefault, Help: "stop claiming after this long"},
			// A message may be on the wire until the deadline plus the
			// SMTP grace; a lease ending earlier would let another tick
			// take the row and call a delivered step unknown.
			Lease: &leaseBound{Default: sequence.TickLeaseDefault, Grace: tick.Grace{
				Duration: sequence.TickSMTPGraceDefault, What: "the " + sequence.TickSMTPGraceDefault.String() + " SMTP grace"}},
		},
		work: func(ctx context.Context, t *tickEnv) (*sequence.TickReport, error) {
			// oauth2 mailboxes' tokens: refreshed once per expiry for all
			// processes (the master key is needed only when one is used).
			tokens := mailauth.NewTokensFromEnv(t.Pool, t.f.Getenv, mailauth.Options{LookupEnv: t.f.LookupEnv})
			mailer := sequence.NewMailer(sequence.MailerOptions{LookupEnv: t.f.LookupEnv, HELO: t.f.Getenv(sequence.HELOEnv), Tokens: tokens})
			defer mailer.Close()
			return sequence.RunTick(ctx, t.Pool, sequence.TickOptions{
				Batch: t.Batch, Concurrency: t.Concurrency, MaxDuration: t.MaxDuration, Lease: t.Lease,
				Mailer: mailer, UnsubscribeBaseURL: t.Settings.UnsubscribeBase, Logger: t.f.Logger(),
			})
		},
		counts: func(rep *sequence.TickReport) map[string]int { return rep.Outcomes },
		shared: addEmailMetrics,
		text:   printEmailReport,
	}
}

// addEmailMetrics adds the email tick's database-wide series to m: the
// per-mailbox running totals and paused gauges, and the overdue steps.
func addEmailMetrics(ctx context.Context, pool *pgxpool.Pool, m *metrics.Metrics) error {
	em, err := metrics.LoadEmail(ctx, pool)
	if err != nil {
		return err
	}
	steps, oldest, err := status.EmailOverdue(ctx, pool, time.Now())
	if err != nil {
		return err
	}
	em.SetOverdue(steps, oldest)
	return m.AddShared(em)
}

func printEmailReport(ios *cliio.IO, rep *sequence.TickReport) {
	fmt.Fprintf(ios.Out, "claimed %s, sent %s in %dms\n", cliio.Thousands(rep.Claimed), cliio.Thousands(rep.Sent), rep.DurationMS)
	fmt.Fprintf(ios.Out, "outcomes: %s\n", cliio.Counts(rep.Outcomes, "=", " "))
	if len(rep.ByMailbox) > 0 {
		fmt.Fprintf(ios.Out, "by mailbox: %s\n", cliio.Counts(rep.ByMailbox, "=", " "))
	}
}
