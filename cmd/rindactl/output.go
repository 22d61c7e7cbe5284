package main

import (
	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
)

// addOutputFlag registers -o/--output: text (the default) or json. status,
// whose default is a table, registers its own.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
}

// parseOutput reads --output as text or json; anything else is a usage
// error (exit 2).
func parseOutput(value string) (cliio.Format, error) {
	format, err := cliio.ParseFormat(value, cliio.FormatText, cliio.FormatJSON)
	if err != nil {
		return "", usageError("%v", err)
	}
	return format, nil
}
