package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/opsfilter"
	"github.com/rindactl/rindactl/internal/redact"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

func newCmdMailbox(f *Factory) *cobra.Command {
	return groupCommand("mailbox", "List, pause, resume, authorize or test sender mailboxes",
		`Sender mailboxes come from campaign files ('rindactl import campaign'). The
email tick pauses one by itself (bounce rate, a refused login, a bad
certificate, a revoked OAuth grant, the provider's own limit); 'mailbox
resume' clears such a pause once the cause is fixed, 'mailbox pause' stops
one by hand, 'mailbox authorize' connects an oauth2 mailbox (Google
Workspace, Microsoft 365), 'mailbox test' logs in over SMTP and IMAP
without sending. Pause, resume and authorize are written to the audit log. 'rindactl why
mailbox ADDRESS' explains one mailbox.`,
		newCmdMailboxList(f), newCmdMailboxPause(f), newCmdMailboxResume(f), newCmdMailboxAuthorize(f), newCmdMailboxTest(f))
}

// MailboxListOptions holds the flags of `rindactl mailbox list`.
type MailboxListOptions struct {
	f         *Factory
	Workspace string
	Campaign  string
	Output    string
}

// mailboxRow is one line of `mailbox list`; its JSON keys are the
// command's contract.
type mailboxRow struct {
	Workspace   string     `json:"workspace"`
	Address     string     `json:"address"`
	State       string     `json:"state"` // active, paused or disabled
	PausedUntil *time.Time `json:"paused_until"`
	PauseReason string     `json:"pause_reason"`
	DailyCap    int        `json:"daily_cap"`
	CapToday    int        `json:"cap_today"`
	Sent24h     int64      `json:"sent_24h"`
}

func newCmdMailboxList(f *Factory) *cobra.Command {
	opts := &MailboxListOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List mailboxes: active, paused (until when, why) or disabled",
		Long: `List every sender mailbox with its state (active, paused or disabled), until
when and why it is paused, its daily cap (0 = none), the cap in force today
(a warm-up ramp lowers it) and the slots of it taken in the last 24 hours.
Pause reasons follow the table, whole.`,
		Example: `  rindactl mailbox list
  rindactl mailbox list --workspace acme --campaign q3-outbound
  rindactl mailbox list --output json | jq '.mailboxes[] | select(.state == "paused")'`,
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "only this workspace's mailboxes (by name)")
	cmd.Flags().StringVar(&opts.Campaign, "campaign", "", "only the mailboxes of this campaign (by name)")
	return listCommand(cmd, &opts.Output, func(ctx context.Context, format cliio.Format) error { return mailboxListRun(ctx, opts, format) })
}

func mailboxListRun(ctx context.Context, opts *MailboxListOptions, format cliio.Format) error {
	now := opts.f.Now()
	load := func(ctx context.Context, db store.DBTX) ([]mailboxRow, error) {
		ws, campaign, err := opsfilter.Resolve(ctx, db, opts.Workspace, opts.Campaign)
		if err != nil {
			return nil, err
		}
		found, err := store.OpsMailboxes(ctx, db, now, sequence.BounceWindow, store.OpsScope{WorkspaceID: ws, CampaignID: campaign})
		if err != nil {
			return nil, err
		}
		rows := make([]mailboxRow, 0, len(found))
		for _, m := range found {
			r := mailboxRow{Workspace: m.Workspace, Address: m.Address, State: m.Status, DailyCap: m.Cap.Daily, CapToday: m.CapToday, Sent24h: m.Sent24h}
			if m.Status == "active" && m.PausedUntil != nil && m.PausedUntil.After(now) {
				u := m.PausedUntil.UTC()
				r.State, r.PausedUntil, r.PauseReason = "paused", &u, redact.String(m.PauseReason)
			}
			rows = append(rows, r)
		}
		return rows, nil
	}
	err := listRun(ctx, opts.f, format, load, cliio.List[mailboxRow]{Key: "mailboxes",
		Empty:   "no mailboxes: import a campaign with 'rindactl import campaign FILE.yaml'",
		Header:  []string{"workspace", "address", "state", "until", "cap today", "sent 24h"},
		Numeric: []int{4, 5}, Whole: []int{2, 3},
		Cells: func(r mailboxRow) []string {
			until, capToday := "-", "none"
			if r.PausedUntil != nil {
				until = cliio.Stamp(*r.PausedUntil)
			}
			if r.CapToday > 0 {
				capToday = cliio.Thousands(int64(r.CapToday))
			}
			return []string{r.Workspace, r.Address, r.State, until, capToday, cliio.Thousands(r.Sent24h)}
		},
		Note: func(r mailboxRow) string {
			if r.PauseReason == "" {
				return ""
			}
			return fmt.Sprintf("%s (%s) paused: %s", r.Address, r.Workspace, r.PauseReason)
		}})
	return mailboxError(err)
}

// MailboxPauseOptions holds the flags of `rindactl mailbox pause`.
type MailboxPauseOptions struct {
	f *Factory
	sequence.MailboxTarget
	For    time.Duration
	Reason string
}

// mailboxPauseMax bounds --for: a longer stop is a campaign change.
const mailboxPauseMax = 365 * 24 * time.Hour

func newCmdMailboxPause(f *Factory) *cobra.Command {
	opts := &MailboxPauseOptions{f: f}
	cmd := &cobra.Command{
		Use:   "pause ADDRESS",
		Short: "Stop a mailbox sending for a while",
		Long: `Stop every email tick, on every host, from sending from ADDRESS for --for.
Its leads wait (a lead whose step 1 has not gone out may move to another
mailbox of the campaign, as for any pause); nothing is lost. Written to the
audit log; 'mailbox resume' ends it early.`,
		Example: `  rindactl mailbox pause sdr01@acme.test --for 2h --reason "DNS change"
  rindactl mailbox pause sdr01@acme.test --workspace acme --for 24h`,
		Args: exactArgs(1, "a mailbox address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Address = args[0]
			return mailboxPauseRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "the mailbox's workspace (needed when the address is in several)")
	cmd.Flags().DurationVar(&opts.For, "for", 0, "how long to pause it, e.g. 30m or 24h (required)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why, shown in mailbox list, status and why")
	return cmd
}

func mailboxPauseRun(ctx context.Context, opts *MailboxPauseOptions) error {
	if opts.For <= 0 || opts.For > mailboxPauseMax {
		return usageError("mailbox pause needs --for with a positive duration up to a year, e.g. --for 2h")
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	c, until, err := opts.Pause(ctx, pool, opts.f.Now(), opts.For, opts.Reason, actor(opts.f))
	if err != nil {
		return mailboxError(err)
	}
	fmt.Fprintf(opts.f.IO.Out, "paused mailbox %s of workspace %s until %s: no tick sends from it until then ('rindactl mailbox resume %s' ends it early)\n",
		c.Mailbox.Address, c.Mailbox.Workspace, cliio.Stamp(until.UTC()), c.Mailbox.Address)
	return nil
}

// MailboxResumeOptions holds the flags of `rindactl mailbox resume`.
type MailboxResumeOptions struct {
	f *Factory
	sequence.MailboxTarget
}

func newCmdMailboxResume(f *Factory) *cobra.Command {
	opts := &MailboxResumeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "resume ADDRESS",
		Short: "Clear a mailbox's pause so the next email tick sends from it",
		Long: `Clear the pause of ADDRESS, whoever set it (the bounce-rate guard, a refused
login or certificate, the provider's limit, an operator): the next email tick
on any host claims its rows again. Fix the cause first: a guard whose cause
is still there pauses it again (the bounce-rate guard counts the last 200
sends; see 'rindactl why mailbox ADDRESS'). Written to the audit log with
the pause it cleared. A disabled mailbox stays disabled (its campaign file
decides).`,
		Example: `  rindactl mailbox resume sdr01@acme.test
  rindactl mailbox resume sdr01@acme.test --workspace acme`,
		Args: exactArgs(1, "a mailbox address"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Address = args[0]
			return mailboxResumeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "the mailbox's workspace (needed when the address is in several)")
	return cmd
}

func mailboxResumeRun(ctx context.Context, opts *MailboxResumeOptions) error {
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	c, err := opts.Resume(ctx, pool, actor(opts.f))
	if err != nil {
		return mailboxError(err)
	}
	out, m := opts.f.IO.Out, c.Mailbox
	if c.Before.Until == nil || !c.Before.Until.After(opts.f.Now()) {
		fmt.Fprintf(out, "mailbox %s of workspace %s was not paused\n", m.Address, m.Workspace)
	} else {
		fmt.Fprintf(out, "resumed mailbox %s of workspace %s (it was paused until %s: %s): the next email tick sends from it\n",
			m.Address, m.Workspace, cliio.Stamp(c.Before.Until.UTC()), redact.String(c.Before.Reason))
	}
	if m.Status != "active" {
		fmt.Fprintf(out, "note: the mailbox is %s; its campaign file decides that\n", m.Status)
	}
	return nil
}

// mailboxError makes a mailbox or filter that does not resolve a usage
// error (exit 2); other errors pass through.
func mailboxError(err error) error {
	var filt *opsfilter.Error
	if errors.As(err, &filt) {
		return usageError("%v", err)
	}
	return err
}
