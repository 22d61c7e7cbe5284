package main

import "github.com/spf13/cobra"

// newCmdDemo is a placeholder until its issue lands.
func newCmdDemo(f *Factory, _ any) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Replay the incident end to end on a throwaway Postgres",
		Long:  `Replay the incident: a provider runs out of quota while emails keep going out.`,
		RunE:  notImplemented,
	}
}
