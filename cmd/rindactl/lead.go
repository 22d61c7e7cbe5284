package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/suppression"
)

func newCmdLead(f *Factory) *cobra.Command {
	return groupCommand("lead", "A person's data: forget it",
		"Commands about one person, named by their address.",
		newCmdLeadForget(f))
}

// LeadForgetOptions holds the flags of `rindactl lead forget`.
type LeadForgetOptions struct {
	f         *Factory
	Email     string
	Workspace string
	Yes       bool
	Output    string
}

func newCmdLeadForget(f *Factory) *cobra.Command {
	opts := &LeadForgetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "forget --email ADDR",
		Short: "Erase a person's data, keeping only a hash that keeps them suppressed",
		Long: `Erase everything rindactl holds about the person with this address (an
erasure request): their leads, with their enrollments, sends, enrichment
state and unsubscribe records; the campaigns' records of having mailed
them; the address in the suppression list; and the address wherever free
text kept it (event payloads, mailbox pause reasons, inbox and tick errors,
skipped inbox messages' reasons).

What stays is the SHA-256 of the canonical address in the suppression list
of each workspace that held it (or of --workspace), so no campaign mails
it and 'import leads' leaves it out, and one audit-log row that names it by
that hash. In one transaction: all of it or nothing. Without --workspace
every workspace is searched. It cannot be undone: without --yes it asks on
a terminal, and refuses (exit 2) elsewhere.`,
		Example: `  rindactl lead forget --email ada@analytical.example --yes
  rindactl lead forget --email ada@analytical.example --workspace acme --yes --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return leadForgetRun(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Email, "email", "", "the person's address (required)")
	fl.StringVarP(&opts.Workspace, "workspace", "w", "", "forget them in this workspace only (default: every workspace)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func leadForgetRun(ctx context.Context, opts *LeadForgetOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if opts.Email == "" {
		return usageError("--email is required: the address of the person to forget")
	}
	canonical, err := address.Canonical(opts.Email)
	if err != nil {
		return usageError("--email: %v", err)
	}
	if err := opts.f.CheckDatabaseURL(); err != nil {
		return err
	}
	ios := opts.f.IO
	if !opts.Yes {
		where := "every workspace"
		if opts.Workspace != "" {
			where = "workspace " + opts.Workspace
		}
		if !ios.CanPrompt() {
			return usageError("lead forget erases %s in %s and cannot be undone: pass --yes to confirm when not on a terminal", canonical, where)
		}
		ok, err := confirm(ios, fmt.Sprintf("Erase every trace of %s in %s? This cannot be undone. [y/N] ", canonical, where))
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(ios.ErrOut, "Forget cancelled: nothing changed.")
			return nil
		}
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := suppression.Forget(ctx, pool, suppression.ForgetRequest{Email: opts.Email, Workspace: opts.Workspace, Actor: actor(opts.f)})
	if errors.Is(err, store.ErrNoWorkspace) {
		return usageError("unknown workspace %q: 'rindactl workspace list' shows them", opts.Workspace)
	}
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return ios.WriteJSON(res)
	}
	n := cliio.Thousands[int64]
	if len(res.Workspaces) == 0 {
		fmt.Fprintf(ios.Out, "no workspace holds %s: nothing erased, nothing suppressed (pass --workspace to suppress it there anyway)\n", canonical)
		return nil
	}
	fmt.Fprintf(ios.Out, "forgot %s in %s: %s leads, %s enrollments, %s campaign recipient records, %s suppression rows now hashed, %s texts scrubbed; the address stays suppressed as sha256 %s (audit %d)\n",
		canonical, strings.Join(res.Workspaces, ", "), n(res.Leads), n(res.Enrollments), n(res.Recipients), n(res.Suppressions), n(res.Scrubbed), res.EmailSHA256, res.AuditID)
	return nil
}
