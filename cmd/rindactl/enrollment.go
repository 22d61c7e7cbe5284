package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/sequence"
)

func newCmdEnrollment(f *Factory) *cobra.Command {
	return groupCommand("enrollment", "End sequences: mark enrollments replied or unsubscribed",
		"An enrollment is one lead's place in one campaign's sequence.",
		newCmdEnrollmentMark(f))
}

// EnrollmentMarkOptions holds the flags of `rindactl enrollment mark`.
type EnrollmentMarkOptions struct {
	f            *Factory
	IDs          []int64
	Replied      bool
	Unsubscribed bool
	Output       string
}

func newCmdEnrollmentMark(f *Factory) *cobra.Command {
	opts := &EnrollmentMarkOptions{f: f}
	cmd := &cobra.Command{
		Use:   "mark (--replied | --unsubscribed) ID...",
		Short: "End enrollments because the lead replied or unsubscribed",
		Long: `End the given enrollments' sequences: no further step is sent.

--replied ends only those enrollments. --unsubscribed also suppresses the
lead's address in its workspace, so no campaign mails it again. Only active
enrollments change; a step a tick is sending right now still goes out, but
the sequence stops after it. Each run writes one audit-log row.

Apps that learn of replies themselves may write the same change in SQL
instead (docs/email.md, "Stops").`,
		Example: `  rindactl enrollment mark --replied 4711
  rindactl enrollment mark --unsubscribed 4711 4712 --output json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("name at least one enrollment id\nRun '%s --help' for usage.", cmd.CommandPath())
			}
			for _, a := range args {
				id, err := strconv.ParseInt(a, 10, 64)
				if err != nil || id < 1 {
					return usageError("invalid enrollment id %q: use the numeric id 'rindactl status' or 'rindactl why' shows", a)
				}
				// A repeated id is one enrollment: the counts stay true.
				if !slices.Contains(opts.IDs, id) {
					opts.IDs = append(opts.IDs, id)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return enrollmentMarkRun(cmd.Context(), opts) },
	}
	cmd.Flags().BoolVar(&opts.Replied, "replied", false, "the lead replied")
	cmd.Flags().BoolVar(&opts.Unsubscribed, "unsubscribed", false, "the lead unsubscribed (also suppresses the address)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func enrollmentMarkRun(ctx context.Context, opts *EnrollmentMarkOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	status := enrollment.Replied
	switch {
	case opts.Replied && opts.Unsubscribed:
		return usageError("--replied and --unsubscribed exclude each other: pick the one that happened")
	case opts.Unsubscribed:
		status = enrollment.Unsubscribed
	case !opts.Replied:
		return usageError("say why the sequence ends: --replied or --unsubscribed")
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	marks, err := sequence.MarkEnrollments(ctx, pool, opts.IDs, status, actor(opts.f))
	if err != nil {
		return err
	}

	ios := opts.f.IO
	if format == cliio.FormatJSON {
		return ios.WriteJSON(map[string]any{"status": status, "requested": len(opts.IDs), "found": marks.Found, "marked": marks.Marked, "suppressed": marks.Suppressed})
	}
	fmt.Fprintf(ios.Out, "marked %s of %s enrollment(s) %s", cliio.Thousands(marks.Marked), cliio.Thousands(len(opts.IDs)), status)
	if missing := int64(len(opts.IDs)) - marks.Found; missing > 0 {
		fmt.Fprintf(ios.Out, "; %s id(s) not found", cliio.Thousands(missing))
	}
	if skipped := marks.Found - marks.Marked; skipped > 0 {
		fmt.Fprintf(ios.Out, "; %s already ended", cliio.Thousands(skipped))
	}
	if status == enrollment.Unsubscribed {
		fmt.Fprintf(ios.Out, "; %s address(es) newly suppressed", cliio.Thousands(marks.Suppressed))
	}
	fmt.Fprintln(ios.Out)
	return nil
}
