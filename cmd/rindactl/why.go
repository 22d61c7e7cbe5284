package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/status"
)

// WhyOptions holds the flags and clients of `rindactl why lead|enrollment|mailbox`.
type WhyOptions struct {
	f         *Factory
	Ref       string
	Workspace string
	Output    string
}

func newCmdWhy(f *Factory) *cobra.Command {
	return groupCommand("why", "Explain in plain words what holds a lead, an enrollment or a mailbox back",
		`Explain everything that holds a row back: status and attempts, lease, negative
cache, open breakers, spend ceiling, rate limits, mailbox pause, sending window,
daily cap, missing address, and the last error. For a mailbox: its pause, its
bounce rate against its limits, and how far its inbox was read (checkpoint, last
error, messages skipped as unprocessable).`,
		newCmdWhyLead(f), newCmdWhyEnrollment(f), newCmdWhyMailbox(f))
}

// newCmdWhyOf builds one `why` subcommand: a reference argument, --output,
// and run.
func newCmdWhyOf(opts *WhyOptions, use, short, example, argWhat string, run func(context.Context, *WhyOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    exactArgs(1, argWhat),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return run(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func newCmdWhyLead(f *Factory) *cobra.Command {
	opts := &WhyOptions{f: f}
	cmd := newCmdWhyOf(opts, "lead <id|external_id>", "Explain why a lead is not enriched yet",
		`  rindactl why lead 4711
  rindactl why lead crm-00042 --workspace acme
  rindactl why lead 4711 --output json | jq -r '.holds[].code'`,
		"a lead id or external id", whyLeadRun)
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "the lead's workspace (needed when an external id exists in several)")
	return cmd
}

func newCmdWhyEnrollment(f *Factory) *cobra.Command {
	return newCmdWhyOf(&WhyOptions{f: f}, "enrollment <id>", "Explain why an enrollment's next step has not gone out",
		`  rindactl why enrollment 90210
  rindactl why enrollment 90210 --output json`,
		"an enrollment id", whyEnrollmentRun)
}

func newCmdWhyMailbox(f *Factory) *cobra.Command {
	opts := &WhyOptions{f: f}
	cmd := newCmdWhyOf(opts, "mailbox <address>", "Explain why a mailbox sends nothing, its bounce rate, and how far its inbox was read",
		`  rindactl why mailbox sdr01@acme.test
  rindactl why mailbox sdr01@acme.test --workspace acme --output json | jq '.inbox.skipped'`,
		"a mailbox address", whyMailboxRun)
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "the mailbox's workspace (needed when the address is in several)")
	return cmd
}

// explainRun opens the database, asks explain, and prints the answer as
// JSON or, in text, as text prints it followed by its holds.
func explainRun[X any](ctx context.Context, f *Factory, format cliio.Format, explain func(context.Context, *pgxpool.Pool) (X, error), text func(io.Writer, X)) error {
	pool, err := f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	x, err := explain(ctx, pool)
	if err != nil {
		return whyError(err)
	}
	if format == cliio.FormatJSON {
		return f.IO.WriteJSON(x)
	}
	text(f.IO.Out, x)
	return nil
}

func whyLeadRun(ctx context.Context, opts *WhyOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	retry, err := enrich.InDoubtRetryFromEnv(opts.f.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	explain := func(ctx context.Context, pool *pgxpool.Pool) (*status.LeadExplanation, error) {
		return status.ExplainLead(ctx, pool, opts.f.Now(), opts.Ref, opts.Workspace, retry)
	}
	return explainRun(ctx, opts.f, format, explain, func(out io.Writer, x *status.LeadExplanation) {
		fmt.Fprintf(out, "lead %d", x.LeadID)
		if x.ExternalID != "" {
			fmt.Fprintf(out, " (%s)", x.ExternalID)
		}
		fmt.Fprintf(out, " in workspace %s\n", x.Workspace)
		fmt.Fprintf(out, "  status     %s, %d attempt(s)", x.Status, x.Attempts)
		if x.Provider != "" {
			fmt.Fprintf(out, ", last provider %s", x.Provider)
		}
		fmt.Fprintln(out)
		writeHolds(out, x.Holds, x.Summary)
	})
}

func whyEnrollmentRun(ctx context.Context, opts *WhyOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(opts.Ref, 10, 64)
	if err != nil || id <= 0 {
		return usageError("invalid enrollment id %q: give the numeric id (see 'rindactl status')", opts.Ref)
	}
	explain := func(ctx context.Context, pool *pgxpool.Pool) (*status.EnrollmentExplanation, error) {
		return status.ExplainEnrollment(ctx, pool, opts.f.Now(), id)
	}
	return explainRun(ctx, opts.f, format, explain, func(out io.Writer, x *status.EnrollmentExplanation) {
		fmt.Fprintf(out, "enrollment %d: lead %d in campaign %s (workspace %s)\n", x.EnrollmentID, x.LeadID, x.Campaign, x.Workspace)
		fmt.Fprintf(out, "  status     %s, step %d of %d, %d attempt(s)", x.Status, x.Step, x.Steps, x.Attempts)
		if x.Mailbox != "" {
			fmt.Fprintf(out, ", mailbox %s", x.Mailbox)
		}
		fmt.Fprintln(out)
		writeHolds(out, x.Holds, x.Summary)
	})
}

func whyMailboxRun(ctx context.Context, opts *WhyOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	explain := func(ctx context.Context, pool *pgxpool.Pool) (*status.MailboxExplanation, error) {
		return status.ExplainMailbox(ctx, pool, opts.f.Now(), opts.Ref, opts.Workspace)
	}
	return explainRun(ctx, opts.f, format, explain, func(out io.Writer, x *status.MailboxExplanation) {
		fmt.Fprintf(out, "mailbox %s in workspace %s\n", x.Address, x.Workspace)
		fmt.Fprintf(out, "  status     %s\n", x.Status)
		fmt.Fprintf(out, "  bounces    %s hard bounces of the last %s sends (%.1f%%), %d in a row; limits %.1f%% of %d, %d in a row (0 = off)\n",
			cliio.Thousands(x.Bounces), cliio.Thousands(x.BounceSends), x.BounceRate*100, x.BouncesInARow, x.BounceRateMax*100, sequence.BounceWindow, x.BounceStreakMax)
		if in := x.Inbox; in != nil {
			checked := "never"
			if in.CheckedAt != nil {
				checked = cliio.Stamp(*in.CheckedAt)
			}
			fmt.Fprintf(out, "  inbox      read up to UID %d (UIDVALIDITY %d), last checked %s\n", in.LastUID, in.UIDValidity, checked)
			writeUnmatched(out, in)
		} else {
			fmt.Fprintln(out, "  inbox      not read (no imap_url)")
		}
		writeHolds(out, x.Holds, x.Summary)
	})
}

// writeUnmatched lists the delivery reports that proved nothing of ours:
// not holds (they ended nothing), but what an operator asks about when a
// forged report arrives.
func writeUnmatched(out io.Writer, in *status.InboxState) {
	if in.UnmatchedTotal == 0 {
		return
	}
	fmt.Fprintf(out, "  unmatched  %s delivery report(s) proved nothing of ours; they ended nothing and count toward no bounce rate (latest %d):\n",
		cliio.Thousands(in.UnmatchedTotal), len(in.Unmatched))
	for _, u := range in.Unmatched {
		fmt.Fprintf(out, "    - UID %d (UIDVALIDITY %d) at %s: %s\n", u.UID, u.UIDValidity, cliio.Stamp(u.RecordedAt), u.Reason)
	}
}

func writeHolds(out io.Writer, holds []status.Hold, summary string) {
	fmt.Fprintf(out, "  verdict    %s\n", summary)
	if len(holds) == 0 {
		return
	}
	fmt.Fprintln(out, "  holding it back:")
	for _, h := range holds {
		fmt.Fprintf(out, "    - %-18s %s\n", h.Code, h.Detail)
	}
}

// whyError maps explanation errors to exit codes: a missing, ambiguous or
// malformed reference is bad input (2), like an unknown workspace anywhere.
func whyError(err error) error {
	var amb *status.AmbiguousError
	var filt *status.FilterError
	var missing *status.NotFoundError
	switch {
	case errors.As(err, &amb), errors.As(err, &filt), errors.As(err, &missing):
		return usageError("%v", err)
	default:
		return err
	}
}
