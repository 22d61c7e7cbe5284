package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/enrich"
	"github.com/rindactl/rindactl/internal/store"
)

// ImportLeadsOptions holds the flags of `rindactl import leads`.
type ImportLeadsOptions struct {
	f           *Factory
	Workspace   string
	File        string
	SkipInvalid bool
	Output      string
	// MaxBytes bounds the file; enrich.ImportMaxBytesDefault unless a test
	// lowers it.
	MaxBytes int64
}

// workspaceName is the schema's CHECK on workspaces.name, checked here so
// the error names the flag instead of a constraint.
var workspaceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func newCmdImportLeads(f *Factory) *cobra.Command {
	return newCmdImportLeadsWith(f, nil)
}

func newCmdImportLeadsWith(f *Factory, runF func(context.Context, *ImportLeadsOptions) error) *cobra.Command {
	opts := &ImportLeadsOptions{f: f, MaxBytes: enrich.ImportMaxBytesDefault}
	cmd := &cobra.Command{
		Use:   "leads --workspace NAME FILE.csv",
		Short: "Import leads from a CSV file into a workspace",
		Long: `Import leads from a CSV file into a workspace, creating the workspace if
it does not exist.

The header names the columns: first_name, last_name and company_domain are
required; email, external_id, company and timezone (an IANA zone) are
optional; any other column is an error. A lead with an email needs no
enrichment; a lead without one is queued for "rindactl enrich tick".
Re-importing a lead with the same external_id updates it, never duplicates
it (an address found meanwhile is kept when the new line has none).

Every line is checked first. A bad line (no email and no company_domain, a
malformed email or domain, an unknown timezone, a value over 1000
characters, a repeated external_id) is reported with its line number and
reason; then nothing is imported and the command exits 2, unless
--skip-invalid imports the good lines. The import is one transaction.
Files over 256 MiB are refused (exit 2): split them.`,
		Example: `  rindactl import leads --workspace acme leads.csv
  rindactl import leads --workspace acme --skip-invalid --output json leads.csv

  # leads.csv
  external_id,first_name,last_name,company_domain,email,timezone
  crm-1,Ada,Lovelace,analytical.example,,Europe/London
  crm-2,Alan,Turing,bletchley.example,alan@bletchley.example,`,
		Args: exactArgs(1, "FILE.csv"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return importLeadsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "workspace to import into (created if missing; required)")
	cmd.Flags().BoolVar(&opts.SkipInvalid, "skip-invalid", false, "import the valid lines and report the invalid ones instead of importing nothing")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

type importLeadsReport struct {
	Workspace string `json:"workspace"`
	store.LeadImportResult
	Invalid  []importLeadsLine `json:"invalid"`
	Imported bool              `json:"imported"`
}

type importLeadsLine struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func importLeadsRun(ctx context.Context, opts *ImportLeadsOptions) error {
	format, err := parseOutput(opts.Output)
	if err != nil {
		return err
	}
	if opts.Workspace == "" {
		return usageError("--workspace is required: name the workspace to import into (e.g. --workspace acme)")
	}
	if !workspaceName.MatchString(opts.Workspace) {
		return usageError("invalid --workspace %q: use 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", opts.Workspace)
	}
	file, err := readLeadFile(opts.File, opts.MaxBytes)
	if err != nil {
		return err
	}
	ios := opts.f.IO
	rep := importLeadsReport{Workspace: opts.Workspace, Invalid: []importLeadsLine{}}
	for _, le := range file.Invalid {
		rep.Invalid = append(rep.Invalid, importLeadsLine{Line: le.Line, Reason: le.Reason})
		if format == cliio.FormatText {
			fmt.Fprintf(ios.ErrOut, "%s: %s\n", opts.File, le.Error())
		}
	}
	if len(file.Invalid) > 0 && !opts.SkipInvalid {
		if format == cliio.FormatJSON {
			if err := ios.WriteJSON(rep); err != nil {
				return err
			}
		}
		return &codedError{code: exitUsage, err: fmt.Errorf("%s: %d invalid line(s); nothing was imported (fix them, or pass --skip-invalid to import the %d valid lines)",
			opts.File, len(file.Invalid), len(file.Records))}
	}

	if len(file.Records) > 0 {
		leads := make([]store.LeadImport, len(file.Records))
		for i, r := range file.Records {
			leads[i] = store.LeadImport{ExternalID: r.ExternalID, FirstName: r.FirstName, LastName: r.LastName,
				Company: r.Company, Domain: r.Domain, Email: r.Email, Timezone: r.Timezone}
		}
		pool, err := opts.f.OpenDB(ctx)
		if err != nil {
			return err
		}
		defer pool.Close()
		rep.LeadImportResult, err = store.ImportLeads(ctx, pool, opts.Workspace, leads)
		if err != nil {
			return err
		}
		rep.Imported = true
	}

	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	created := ""
	if rep.WorkspaceCreated {
		created = " (created)"
	}
	fmt.Fprintf(ios.Out, "imported %d leads into workspace %s%s: %d new, %d updated, %d queued for enrichment",
		rep.Inserted+rep.Updated, opts.Workspace, created, rep.Inserted, rep.Updated, rep.Queued)
	if len(rep.Invalid) > 0 {
		fmt.Fprintf(ios.Out, ", %d invalid lines skipped", len(rep.Invalid))
	}
	fmt.Fprintln(ios.Out)
	return nil
}

// readLeadFile opens and parses path, refusing files over maxBytes before
// reading them.
func readLeadFile(path string, maxBytes int64) (*enrich.LeadFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageError("%s: no such file", path)
		}
		return nil, usageError("%s: cannot open: %v", path, errors.Unwrap(err))
	}
	defer fh.Close()
	limit := fmt.Sprintf("%d bytes", maxBytes)
	if maxBytes >= 1<<20 {
		limit = fmt.Sprintf("%d MiB", maxBytes>>20)
	}
	tooBig := usageError("%s is larger than the %s limit for one import; split it into smaller files", path, limit)
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > maxBytes {
		return nil, tooBig
	}
	// A pipe or device has no size up front: count while reading.
	lr := &io.LimitedReader{R: fh, N: maxBytes + 1}
	file, err := enrich.ParseLeadCSV(lr)
	if lr.N <= 0 {
		return nil, tooBig
	}
	if err != nil {
		return nil, &codedError{code: exitUsage, err: fmt.Errorf("%s: %w", path, err)}
	}
	return file, nil
}
