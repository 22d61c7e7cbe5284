package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/sequence"
	"github.com/rindactl/rindactl/internal/store"
)

// EnrollOptions holds the flags of `rindactl enroll`.
type EnrollOptions struct {
	f         *Factory
	Workspace string
	Campaign  string
	AllLeads  bool
	LeadsFile string
	Output    string
}

func newCmdEnroll(f *Factory) *cobra.Command {
	opts := &EnrollOptions{f: f}
	cmd := &cobra.Command{
		Use:   "enroll --workspace W --campaign NAME (--all-leads | --leads FILE)",
		Short: "Enroll leads in a campaign's sequence",
		Long: `Enroll leads in a campaign. Each lead is bound to one of the campaign's
healthy mailboxes (rendezvous hashing with bounded loads: balanced and
deterministic) and its first step is scheduled inside the sending window.
Enrolling twice is a no-op. Unsent step-1 leads of a paused, disabled or
removed mailbox are moved to a healthy one.

--leads FILE lists leads one per line, by external id or email address;
blank lines and lines starting with # are ignored.`,
		Example: `  rindactl enroll --workspace acme --campaign q4-outreach --all-leads
  rindactl enroll --workspace acme --campaign q4-outreach --leads vip.txt`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Workspace == "" || opts.Campaign == "" {
				return usageError("--workspace and --campaign are required")
			}
			if opts.AllLeads == (opts.LeadsFile != "") {
				return usageError("choose exactly one of --all-leads or --leads FILE")
			}
			return enrollRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "workspace name")
	cmd.Flags().StringVar(&opts.Campaign, "campaign", "", "campaign name")
	cmd.Flags().BoolVar(&opts.AllLeads, "all-leads", false, "enroll every lead of the workspace")
	cmd.Flags().StringVar(&opts.LeadsFile, "leads", "", "file of external ids or emails, one per line")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func enrollRun(ctx context.Context, opts *EnrollOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	req := sequence.EnrollRequest{Workspace: opts.Workspace, Campaign: opts.Campaign}
	if opts.LeadsFile != "" {
		if req.Keys, err = readLeadKeys(opts.LeadsFile); err != nil {
			return err
		}
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := sequence.Enroll(ctx, pool, req, opts.f.Now())
	if errors.Is(err, store.ErrCampaignNotFound) || errors.Is(err, store.ErrNoWorkspace) {
		return usageError("%v", err) // an unknown workspace or campaign is bad input
	}
	if err != nil {
		return err
	}
	if format == cliio.FormatJSON {
		return opts.f.IO.WriteJSON(res)
	}
	fmt.Fprintf(opts.f.IO.Out, "enrolled %s leads in %s/%s", cliio.Thousands(res.Enrolled), opts.Workspace, opts.Campaign)
	if res.Rebound > 0 {
		fmt.Fprintf(opts.f.IO.Out, "; moved %s unsent leads to healthy mailboxes", cliio.Thousands(res.Rebound))
	}
	if res.Suppressed > 0 {
		fmt.Fprintf(opts.f.IO.Out, "; skipped %s leads whose address is suppressed", cliio.Thousands(res.Suppressed))
	}
	if res.Duplicates > 0 {
		fmt.Fprintf(opts.f.IO.Out, "; skipped %s leads whose address another lead already has in the campaign", cliio.Thousands(res.Duplicates))
	}
	fmt.Fprintln(opts.f.IO.Out)
	if res.Unbound > 0 {
		fmt.Fprintf(opts.f.IO.ErrOut, "warning: %s leads have no mailbox: every mailbox of the campaign is paused or disabled; enroll again when one recovers\n", cliio.Thousands(res.Unbound))
	}
	return nil
}

func readLeadKeys(path string) ([]string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, usageError("cannot read --leads file: %v", err)
	}
	defer file.Close()
	keys := []string{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			keys = append(keys, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, usageError("reading --leads file %s: %v", path, err)
	}
	if len(keys) == 0 {
		return nil, usageError("--leads file %s lists no leads", path)
	}
	return keys, nil
}
