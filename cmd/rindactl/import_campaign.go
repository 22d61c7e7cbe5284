package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/sequence"
)

// ImportCampaignOptions holds the flags of `rindactl import campaign`.
type ImportCampaignOptions struct {
	f      *Factory
	File   string
	Output string
}

func newCmdImportCampaign(f *Factory) *cobra.Command {
	opts := &ImportCampaignOptions{f: f}
	cmd := &cobra.Command{
		Use:   "campaign FILE.yaml",
		Short: "Import or update a campaign (mailboxes, window, steps) from YAML",
		Long: `Import or update a campaign from a YAML file: its mailboxes, sending window
and sequence steps (format: docs/campaign-format.md, example:
examples/campaign.yaml). Re-importing the same workspace and name updates
the campaign; unsent step-1 leads of a removed mailbox move to the others.

Invalid YAML, unknown fields, bad durations, templates or SMTP URLs are
rejected with the field's path, and nothing is written. Passwords never go
in the file: each mailbox names the environment variable that holds it.`,
		Example: `  rindactl import campaign examples/campaign.yaml
  rindactl import campaign - < campaign.yaml`,
		Args: exactArgs(1, "FILE.yaml, or - for stdin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return importCampaignRun(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func importCampaignRun(ctx context.Context, opts *ImportCampaignOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	var r io.Reader = opts.f.IO.In
	if opts.File != "-" {
		file, err := os.Open(opts.File)
		if err != nil {
			return usageError("cannot read campaign file: %v", err)
		}
		defer file.Close()
		r = file
	}
	c, err := sequence.ParseCampaign(r)
	if err != nil {
		return usageError("%s: %v", opts.File, err)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := sequence.ImportCampaign(ctx, pool, c)
	if err != nil {
		return fmt.Errorf("import %s: %w", opts.File, err)
	}
	if format == cliio.FormatJSON {
		return opts.f.IO.WriteJSON(map[string]any{
			"workspace": c.Workspace, "campaign": c.Name, "campaign_id": res.CampaignID, "created": res.Created,
			"mailboxes": len(c.Mailboxes), "steps": len(c.Steps), "rebound": res.Rebound,
		})
	}
	verb := "updated"
	if res.Created {
		verb = "created"
	}
	fmt.Fprintf(opts.f.IO.Out, "%s campaign %s/%s: %d mailboxes, %d steps", verb, c.Workspace, c.Name, len(c.Mailboxes), len(c.Steps))
	if res.Rebound > 0 {
		fmt.Fprintf(opts.f.IO.Out, "; %s unsent leads moved off removed mailboxes", cliio.Thousands(res.Rebound))
	}
	fmt.Fprintln(opts.f.IO.Out)
	return nil
}
