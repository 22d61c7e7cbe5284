package main

import "github.com/spf13/cobra"

// newCmdEnroll is a placeholder until its issue lands.
func newCmdEnroll(f *Factory, _ any) *cobra.Command {
	return &cobra.Command{
		Use:   "enroll --workspace W --campaign NAME (--all-leads | --leads FILE)",
		Short: "Enroll leads in a campaign's sequence",
		Long:  `Enroll leads in a campaign. Each lead is bound to one of the campaign's mailboxes; enrolling twice is a no-op.`,
		RunE:  notImplemented,
	}
}
