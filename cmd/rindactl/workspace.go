package main

import "github.com/spf13/cobra"

func newCmdWorkspace(f *Factory) *cobra.Command {
	return groupCommand("workspace", "List workspaces or set their monthly USD ceiling",
		"Workspaces own leads, campaigns, mailboxes and a monthly provider spend ceiling.",
		&cobra.Command{Use: "list", Short: "List workspaces with their spend and ceiling", RunE: notImplemented},
		&cobra.Command{Use: "set", Short: "Change a workspace's settings (e.g. --monthly-usd-ceiling)", RunE: notImplemented})
}
