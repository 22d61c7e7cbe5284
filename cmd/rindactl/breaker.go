package main

import "github.com/spf13/cobra"

func newCmdBreaker(f *Factory) *cobra.Command {
	return groupCommand("breaker", "List, open or reset provider circuit breakers per workspace",
		"Circuit breakers per (workspace, provider) stop all calls to a provider that ran out of quota.",
		&cobra.Command{Use: "list", Short: "List breakers and their state", RunE: notImplemented},
		&cobra.Command{Use: "reset", Short: "Close a breaker now", RunE: notImplemented},
		&cobra.Command{Use: "open", Short: "Open a breaker for a while (a quota you know is gone)", RunE: notImplemented})
}
