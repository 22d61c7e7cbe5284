package main

import "github.com/spf13/cobra"

// newCmdRequeue is a placeholder until its issue lands.
func newCmdRequeue(f *Factory, _ any) *cobra.Command {
	return &cobra.Command{
		Use:   "requeue --status=S",
		Short: "Move blocked or failed rows back to the queue (e.g. after a quota renews)",
		Long:  `Move unreachable or failed leads (and retryable email work) back to pending, in batches, with --dry-run first.`,
		RunE:  notImplemented,
	}
}
