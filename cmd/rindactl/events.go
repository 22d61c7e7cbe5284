package main

import "github.com/spf13/cobra"

func newCmdEvents(f *Factory) *cobra.Command {
	return groupCommand("events", "Domain events (quota_exhausted, breaker_opened, ...): list and deliver to Slack",
		"Domain events are written to an outbox with the state change and delivered once each to a Slack webhook.",
		&cobra.Command{Use: "list", Short: "List recent events and their delivery state", RunE: notImplemented},
		&cobra.Command{Use: "deliver", Short: "Deliver pending events to the Slack webhook now", RunE: notImplemented})
}
