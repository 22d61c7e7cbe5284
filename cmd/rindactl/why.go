package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/status"
)

// WhyOptions holds the flags and clients of `rindactl why lead|enrollment`.
type WhyOptions struct {
	f         *Factory
	Ref       string
	Workspace string
	Output    string
}

func newCmdWhy(f *Factory) *cobra.Command {
	return groupCommand("why", "Explain in plain words what holds a lead or an enrollment back",
		`Explain everything that holds a row back: status and attempts, lease, negative
cache, open breakers, spend ceiling, rate limits, mailbox pause, sending window,
daily cap, missing address, and the last error.`,
		newCmdWhyLead(f), newCmdWhyEnrollment(f))
}

func newCmdWhyLead(f *Factory) *cobra.Command {
	opts := &WhyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "lead <id|external_id>",
		Short: "Explain why a lead is not enriched yet",
		Example: `  rindactl why lead 4711
  rindactl why lead crm-00042 --workspace acme
  rindactl why lead 4711 --output json | jq -r '.holds[].code'`,
		Args: exactArgs(1, "a lead id or external id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return whyLeadRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "the lead's workspace (needed when an external id exists in several)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func newCmdWhyEnrollment(f *Factory) *cobra.Command {
	opts := &WhyOptions{f: f}
	cmd := &cobra.Command{
		Use:   "enrollment <id>",
		Short: "Explain why an enrollment's next step has not gone out",
		Example: `  rindactl why enrollment 90210
  rindactl why enrollment 90210 --output json`,
		Args: exactArgs(1, "an enrollment id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return whyEnrollmentRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func whyLeadRun(ctx context.Context, opts *WhyOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	x, err := status.ExplainLead(ctx, pool, opts.f.Now(), opts.Ref, opts.Workspace)
	if err != nil {
		return whyError(err)
	}
	if format == cliio.FormatJSON {
		return opts.f.IO.WriteJSON(x)
	}
	out := opts.f.IO.Out
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
	return nil
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
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	x, err := status.ExplainEnrollment(ctx, pool, opts.f.Now(), id)
	if err != nil {
		return whyError(err)
	}
	if format == cliio.FormatJSON {
		return opts.f.IO.WriteJSON(x)
	}
	out := opts.f.IO.Out
	fmt.Fprintf(out, "enrollment %d: lead %d in campaign %s (workspace %s)\n", x.EnrollmentID, x.LeadID, x.Campaign, x.Workspace)
	fmt.Fprintf(out, "  status     %s, step %d of %d, %d attempt(s)", x.Status, x.Step, x.Steps, x.Attempts)
	if x.Mailbox != "" {
		fmt.Fprintf(out, ", mailbox %s", x.Mailbox)
	}
	fmt.Fprintln(out)
	writeHolds(out, x.Holds, x.Summary)
	return nil
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
