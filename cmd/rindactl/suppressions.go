package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/suppression"
)

func newCmdSuppressions(f *Factory) *cobra.Command {
	return groupCommand("suppressions", "The suppression list: addresses never mailed again (CSV import and export)",
		`A workspace's suppression list holds the addresses no campaign mails again:
hard bounces, unsubscribes, imports, and the hashes 'rindactl lead forget'
leaves. Enrolling skips them and the email tick never sends to them.`,
		newCmdSuppressionsImport(f), newCmdSuppressionsExport(f))
}

// SuppressionsImportOptions holds the flags of `rindactl suppressions import`.
type SuppressionsImportOptions struct {
	f         *Factory
	Workspace string
	File      string
	Output    string
	// MaxBytes bounds the file; suppression.ImportMaxBytesDefault unless a
	// test lowers it.
	MaxBytes int64
}

func newCmdSuppressionsImport(f *Factory) *cobra.Command {
	opts := &SuppressionsImportOptions{f: f, MaxBytes: suppression.ImportMaxBytesDefault}
	cmd := &cobra.Command{
		Use:   "import --workspace NAME FILE.csv",
		Short: "Add the addresses of a CSV file to a workspace's suppression list",
		Long: `Add addresses to a workspace's suppression list from a CSV file, as
'rindactl suppressions export' writes it or from another tool.

The header names the columns: email (the address), email_sha256 (its hash,
for a row that has only the hash), reason (a word such as unsubscribed or
bounced; default imported) and created_at (RFC 3339; default now). Either
email or email_sha256 is required. Addresses are stored in their canonical
form (domain in IDNA form, lower case, NFC); an address already on the list
keeps its row, and a forgotten one (lead forget) keeps only its hash.

The import is all or nothing, in one transaction, streamed in batches: a
bad line (not an address, a hash that is not the address's, an unknown
reason, a NUL byte, a value over 1000 characters) is reported with its line
number; then nothing is imported and the command exits 2. A CSV syntax error
stops it (exit 2). Files over 256 MiB are refused (exit 2): split them.
FILE - reads standard input (to the same limit).`,
		Example: `  rindactl suppressions import --workspace acme suppressions.csv

  # suppressions.csv
  email,reason
  ada@analytical.example,unsubscribed
  alan@bletchley.example,bounced`,
		Args: exactArgs(1, "FILE.csv (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			return suppressionsImportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "workspace whose list to add to (required)")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func suppressionsImportRun(ctx context.Context, opts *SuppressionsImportOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if opts.Workspace == "" {
		return usageError("--workspace is required: name the workspace whose suppression list to add to (e.g. --workspace acme)")
	}
	fh, _, err := openLeadFile(opts.File, opts.MaxBytes, opts.f.IO.In)
	if err != nil {
		return err
	}
	defer fh.Close()
	reader, err := suppression.NewReader(fh)
	if err != nil {
		return suppressionFileError(opts.File, opts.MaxBytes, err)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	ios := opts.f.IO
	var onInvalid func(suppression.LineError)
	if format == cliio.FormatText {
		onInvalid = func(le suppression.LineError) { fmt.Fprintf(ios.ErrOut, "%s: %s\n", opts.File, le.Error()) }
	}
	rep, err := suppression.Import(ctx, pool, opts.Workspace, reader, onInvalid)
	var invalid *suppression.InvalidLinesError
	switch {
	case errors.As(err, &invalid):
		if format == cliio.FormatJSON {
			if err := ios.WriteJSON(rep); err != nil {
				return err
			}
		}
		return usageError("%s: %s invalid line(s); nothing was imported (fix them and import again)", opts.File, cliio.Thousands(int64(invalid.Invalid)))
	case errors.Is(err, store.ErrNoWorkspace):
		return usageError("unknown workspace %q: 'rindactl workspace list' shows them", opts.Workspace)
	case err != nil:
		return suppressionFileError(opts.File, opts.MaxBytes, err)
	}
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	fmt.Fprintf(ios.Out, "imported %s suppressions into workspace %s: %s new, %s already listed\n",
		cliio.Thousands(rep.Lines), opts.Workspace, cliio.Thousands(rep.Added), cliio.Thousands(rep.Lines-rep.Added))
	return nil
}

// suppressionFileError maps what reading the file found to an exit code,
// as leadFileError does for lead files.
func suppressionFileError(path string, maxBytes int64, err error) error {
	var header *suppression.HeaderError
	var syntax *suppression.SyntaxError
	if errors.As(err, &header) || errors.As(err, &syntax) {
		return usageError("%s: %v", path, err)
	}
	return leadFileError(path, maxBytes, err)
}

// SuppressionsExportOptions holds the flags of `rindactl suppressions export`.
type SuppressionsExportOptions struct {
	f         *Factory
	Workspace string
}

func newCmdSuppressionsExport(f *Factory) *cobra.Command {
	opts := &SuppressionsExportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "export --workspace NAME",
		Short: "Write a workspace's suppression list as CSV on stdout",
		Long: `Write a workspace's suppression list to stdout as CSV, oldest first, from
one snapshot: email, email_sha256, reason, created_at. A forgotten person
(lead forget) has an empty email and only the hash. 'rindactl suppressions
import' reads the file back unchanged.`,
		Example: `  rindactl suppressions export --workspace acme > acme-suppressions.csv
  rindactl suppressions export -w acme | rindactl suppressions import -w acme-eu -`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error { return suppressionsExportRun(cmd.Context(), opts) },
	}
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "workspace whose list to write (required)")
	return cmd
}

func suppressionsExportRun(ctx context.Context, opts *SuppressionsExportOptions) error {
	if opts.Workspace == "" {
		return usageError("--workspace is required: name the workspace whose suppression list to write (e.g. --workspace acme)")
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	out := bufio.NewWriter(opts.f.IO.Out)
	_, err = suppression.Export(ctx, pool, opts.Workspace, out)
	if errors.Is(err, store.ErrNoWorkspace) {
		return usageError("unknown workspace %q: 'rindactl workspace list' shows them", opts.Workspace)
	}
	if err != nil {
		return err
	}
	return out.Flush()
}
