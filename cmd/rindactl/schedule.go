package main

import "github.com/spf13/cobra"

func newCmdSchedule(f *Factory) *cobra.Command {
	return groupCommand("schedule", "Print crontab, systemd or Kubernetes units that run the ticks",
		"Generate deployment units for the ticks from cron specs.",
		&cobra.Command{Use: "print", Short: "Print units for --format crontab|systemd|kubernetes", RunE: notImplemented})
}
