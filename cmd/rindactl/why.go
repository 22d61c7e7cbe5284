package main

import "github.com/spf13/cobra"

func newCmdWhy(f *Factory) *cobra.Command {
	return groupCommand("why", "Explain in plain words what holds a lead or an enrollment back",
		"Explain everything that holds a row back: status, lease, negative cache, breaker, ceiling, mailbox pause, window, cap.",
		&cobra.Command{Use: "lead <id|external_id>", Short: "Explain why a lead is not enriched yet", RunE: notImplemented},
		&cobra.Command{Use: "enrollment <id>", Short: "Explain why an enrollment's next step has not gone out", RunE: notImplemented})
}
