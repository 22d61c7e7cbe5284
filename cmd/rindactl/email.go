package main

import "github.com/spf13/cobra"

func newCmdEmail(f *Factory) *cobra.Command {
	return groupCommand("email", "Sequence email: run one bounded sending tick",
		"Sequence email sends due campaign steps through the campaign's mailboxes.",
		&cobra.Command{Use: "tick", Short: "Claim a bounded batch of due sequence steps, send them, schedule the next, exit", RunE: notImplemented})
}
