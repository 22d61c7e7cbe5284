package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/schollz/progressbar/v3"
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
	return newCmdImportLeadsWith(f)
}

func newCmdImportLeadsWith(f *Factory) *cobra.Command {
	opts := &ImportLeadsOptions{f: f, MaxBytes: enrich.ImportMaxBytesDefault}
	cmd := &cobra.Command{
		Use:   "leads --workspace NAME FILE.csv|-",
		Short: "Import leads from a CSV file into a workspace",
		Long: `Import leads from a CSV file into a workspace, creating the workspace if
it does not exist.

The header names the columns: first_name, last_name and company_domain are
required; email, external_id, company and timezone (an IANA zone) are
optional; any other column is an error (exit 2). A lead with an email needs
no enrichment; a lead without one is queued for "rindactl enrich tick".
Addresses are lower-cased and trimmed; a line whose address belongs to a
person erased with 'rindactl lead forget' is left out (and counted).
Re-importing a lead with the same
external_id updates it, never duplicates it (an address found meanwhile is
kept when the new line has none). A line without an external_id is the
lead with its address or, without one, its name at its company_domain:
importing the same file twice, or a file that repeats a lead, merges the
line into that lead (the last line's values win) and counts it as a
duplicate merged, never a second lead.

The file is streamed in batches of 5,000 lines, each copied into a staging
table and merged, inside one transaction: memory stays flat for any size,
every statement stays far under statement_timeout, and the import is all
or nothing (interrupted, it leaves nothing; run it again). On a terminal,
progress is drawn on stderr.

A bad line (no email and no company_domain, a malformed email or domain, an
unknown timezone, a value over 1000 characters, a NUL byte, a repeated
external_id) is reported with its line number and reason; then nothing is
imported and the command exits 2, unless --skip-invalid imports the good
lines. A CSV syntax error (an unclosed quote) stops the import (exit 2).
Files over 256 MiB are refused (exit 2): split them. A FILE of "-" reads
standard input (to the same limit).`,
		Example: `  rindactl import leads --workspace acme leads.csv
  rindactl import leads --workspace acme --skip-invalid --output json leads.csv
  crm-export --csv | rindactl import leads --workspace acme -

  # leads.csv
  external_id,first_name,last_name,company_domain,email,timezone
  crm-1,Ada,Lovelace,analytical.example,,Europe/London
  crm-2,Alan,Turing,bletchley.example,alan@bletchley.example,`,
		Args: exactArgs(1, "FILE.csv (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
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
	Invalid      []importLeadsLine `json:"invalid"`
	InvalidCount int               `json:"invalid_count"`
	Imported     bool              `json:"imported"`
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
	fh, size, err := openLeadFile(opts.File, opts.MaxBytes, opts.f.IO.In)
	name := opts.File
	if name == stdinName {
		name = "standard input"
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	reader, err := enrich.NewLeadReader(fh)
	if err != nil {
		return leadFileError(name, opts.MaxBytes, err)
	}
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()

	ios := opts.f.IO
	iopts, done := importLeadsOptions(ios, format, name, size, opts.SkipInvalid)
	defer done()
	res, err := enrich.ImportLeads(ctx, pool, opts.Workspace, reader, iopts)
	rep := importLeadsReport{Workspace: opts.Workspace, LeadImportResult: res.LeadImportResult, Invalid: []importLeadsLine{},
		InvalidCount: res.InvalidCount, Imported: res.Imported}
	for _, le := range res.Invalid {
		rep.Invalid = append(rep.Invalid, importLeadsLine{Line: le.Line, Reason: le.Reason})
	}
	var invalid *enrich.InvalidLinesError
	if errors.As(err, &invalid) {
		if format == cliio.FormatJSON {
			if err := ios.WriteJSON(rep); err != nil {
				return err
			}
		}
		return usageError("%s: %s invalid line(s); nothing was imported (fix them, or pass --skip-invalid to import the %s valid lines)",
			name, cliio.Thousands(int64(invalid.Invalid)), cliio.Thousands(int64(invalid.Valid)))
	}
	if err != nil {
		return leadFileError(name, opts.MaxBytes, err)
	}
	if format == cliio.FormatJSON {
		return ios.WriteJSON(rep)
	}
	printImportLeads(ios, rep)
	return nil
}

// importLeadsOptions says how the import reports as it goes: each invalid
// line on stderr, and a progress bar over the file's size on a terminal
// (done ends it).
func importLeadsOptions(ios *cliio.IO, format cliio.Format, name string, size int64, skipInvalid bool) (enrich.ImportOptions, func()) {
	iopts := enrich.ImportOptions{SkipInvalid: skipInvalid}
	if format != cliio.FormatText {
		return iopts, func() {}
	}
	iopts.OnInvalid = func(le enrich.LineError) { fmt.Fprintf(ios.ErrOut, "%s: %s\n", name, le.Error()) }
	if !ios.IsStderrTTY() || size <= 0 {
		return iopts, func() {}
	}
	bar := progressbar.DefaultBytes(size, "importing "+name)
	progressbar.OptionSetWriter(ios.ErrOut)(bar)
	progressbar.OptionClearOnFinish()(bar)
	iopts.Progress = func(n int64) { _ = bar.Set64(min(n, size)) }
	return iopts, func() { _ = bar.Finish() }
}

func printImportLeads(ios *cliio.IO, rep importLeadsReport) {
	created := ""
	if rep.WorkspaceCreated {
		created = " (created)"
	}
	n := cliio.Thousands[int64]
	fmt.Fprintf(ios.Out, "imported %s leads into workspace %s%s: %s new, %s updated, %s duplicates merged, %s queued for enrichment",
		n(rep.Inserted+rep.Updated+rep.Merged), rep.Workspace, created, n(rep.Inserted), n(rep.Updated), n(rep.Merged), n(rep.Queued))
	if rep.InvalidCount > 0 {
		fmt.Fprintf(ios.Out, ", %s invalid lines skipped", n(int64(rep.InvalidCount)))
	}
	if rep.Forgotten > 0 {
		fmt.Fprintf(ios.Out, ", %s lines of forgotten people left out", n(rep.Forgotten))
	}
	fmt.Fprintln(ios.Out)
}

// errLeadFileTooBig stops a read past the size limit of a pipe or device,
// which has no size up front.
var errLeadFileTooBig = errors.New("lead file over the size limit")

// stdinName is the FILE argument that reads standard input.
const stdinName = "-"

// openLeadFile opens path ("-": stdin), refusing files over maxBytes
// before reading them; it returns the size when the file has one (for
// progress).
func openLeadFile(path string, maxBytes int64, stdin io.Reader) (io.ReadCloser, int64, error) {
	if path == stdinName {
		return io.NopCloser(&limitReader{r: stdin, left: maxBytes}), 0, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, usageError("%s: no such file", path)
		}
		return nil, 0, usageError("%s: cannot open: %v", path, errors.Unwrap(err))
	}
	var size int64
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() {
		if size = st.Size(); size > maxBytes {
			fh.Close()
			return nil, 0, leadFileError(path, maxBytes, errLeadFileTooBig)
		}
	}
	return struct {
		io.Reader
		io.Closer
	}{&limitReader{r: fh, left: maxBytes}, fh}, size, nil
}

// limitReader fails with errLeadFileTooBig instead of a silent EOF, so a
// cut-off file can never import as if complete.
type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// A file of exactly the limit is whole: only a byte beyond it is
		// too much.
		var one [1]byte
		if n, err := l.r.Read(one[:]); n == 0 && err == io.EOF {
			return 0, io.EOF
		}
		return 0, errLeadFileTooBig
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// leadFileError maps what reading the file found to an exit code: a file
// too big, a bad header, broken CSV syntax are bad input (2); the rest
// (a read or database failure) is a runtime error (1).
func leadFileError(path string, maxBytes int64, err error) error {
	var header *enrich.HeaderError
	var syntax *enrich.SyntaxError
	switch {
	case errors.Is(err, errLeadFileTooBig):
		limit := fmt.Sprintf("%d bytes", maxBytes)
		if maxBytes >= 1<<20 {
			limit = fmt.Sprintf("%d MiB", maxBytes>>20)
		}
		return usageError("%s is larger than the %s limit for one import; split it into smaller files", path, limit)
	case errors.As(err, &header), errors.As(err, &syntax):
		return usageError("%s: %v", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
