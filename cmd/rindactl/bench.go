package main

import "github.com/spf13/cobra"

func newCmdBench(f *Factory) *cobra.Command {
	return groupCommand("bench", "Measure the claim pipeline and email drain on this machine",
		"Benchmarks against a scratch schema: the enrichment claim pipeline and the email drain.",
		&cobra.Command{Use: "claim", Short: "Time claim -> no-op provider -> record over N due leads", RunE: notImplemented},
		&cobra.Command{Use: "email", Short: "Time sending N steps into an in-process SMTP server", RunE: notImplemented})
}
