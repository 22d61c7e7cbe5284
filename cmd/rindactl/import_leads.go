package main

import "github.com/spf13/cobra"

// newCmdImportLeads is a placeholder until its issue lands.
func newCmdImportLeads(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "leads --workspace NAME FILE.csv",
		Short: "Import leads from a CSV file into a workspace",
		Long:  `Import leads from a CSV file. Leads without an email are queued for enrichment.`,
		RunE:  notImplemented,
	}
}
