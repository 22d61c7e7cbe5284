package main

import "github.com/spf13/cobra"

func newCmdImport(f *Factory) *cobra.Command {
	return groupCommand("import", "Import leads (CSV) or campaigns (YAML)",
		"Import leads from CSV or campaigns from YAML. Bad input is rejected with its line or field, and nothing is written.",
		newCmdImportLeads(f), newCmdImportCampaign(f))
}
