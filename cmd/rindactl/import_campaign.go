package main

import "github.com/spf13/cobra"

// newCmdImportCampaign is a placeholder until its issue lands.
func newCmdImportCampaign(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "campaign FILE.yaml",
		Short: "Import or update a campaign (mailboxes, window, steps) from YAML",
		Long:  `Import or update a campaign from a YAML file: its mailboxes, sending window and sequence steps.`,
		RunE:  notImplemented,
	}
}
