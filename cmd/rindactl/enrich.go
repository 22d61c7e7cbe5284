package main

import "github.com/spf13/cobra"

func newCmdEnrich(f *Factory) *cobra.Command {
	return groupCommand("enrich", "Lead enrichment: run one bounded enrichment tick",
		"Lead enrichment finds email addresses for leads through providers (Hunter, Findymail, MillionVerifier).",
		&cobra.Command{Use: "tick", Short: "Claim a bounded batch of due leads, enrich them, record outcomes, exit", RunE: notImplemented})
}
