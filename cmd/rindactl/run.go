package main

import "github.com/spf13/cobra"

// newCmdRun is a placeholder until its issue lands.
func newCmdRun(f *Factory, _ any) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "Foreground scheduler: fire ticks as child processes on cron specs",
		Long:  `For containers without cron: fire each tick on its cron spec as a separate child process.`,
		RunE:  notImplemented,
	}
}
