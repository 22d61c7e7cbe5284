package enrich

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// ImportReportedInvalidMax bounds how many invalid lines an import keeps
// for its report; the count covers them all.
const ImportReportedInvalidMax = 1000

// ImportOptions tunes ImportLeads; zero values take the defaults.
type ImportOptions struct {
	// SkipInvalid imports the valid lines when some are invalid; otherwise
	// one invalid line means nothing is imported.
	SkipInvalid bool
	// Batch is how many lines are staged and merged at a time.
	Batch int
	// OnInvalid sees every invalid line as it is found (to print it).
	OnInvalid func(LineError)
	// Progress is told how many bytes of the file were read after each batch.
	Progress func(bytesRead int64)
}

// ImportReport is what ImportLeads did.
type ImportReport struct {
	store.LeadImportResult
	// Invalid holds the first ImportReportedInvalidMax invalid lines;
	// InvalidCount counts them all.
	Invalid      []LineError
	InvalidCount int
	// Imported is true once the import committed.
	Imported bool
}

// InvalidLinesError is an import that found invalid lines without
// SkipInvalid: nothing was imported.
type InvalidLinesError struct {
	Invalid int
	Valid   int
}

func (e *InvalidLinesError) Error() string {
	return "invalid lines; nothing was imported"
}

// ImportLeads streams the lead CSV behind lr into workspace in batches, in
// one transaction: memory stays flat whatever the file's size, every
// statement is one batch (far under statement_timeout), and the import is
// all or nothing. The workspace is created on the first valid line. Every
// line is read even after an invalid one, so one run reports them all.
func ImportLeads(ctx context.Context, pool *pgxpool.Pool, workspace string, lr *LeadReader, opts ImportOptions) (ImportReport, error) {
	if opts.Batch <= 0 {
		opts.Batch = store.ImportBatchDefault
	}
	im := &leadImport{pool: pool, workspace: workspace, lr: lr, opts: opts,
		rep: ImportReport{Invalid: []LineError{}}, batch: make([]store.LeadImport, 0, opts.Batch)}
	defer im.rollback(ctx)
	if err := im.read(ctx); err != nil {
		return im.rep, err
	}
	if im.rep.InvalidCount > 0 && !opts.SkipInvalid {
		return im.rep, &InvalidLinesError{Invalid: im.rep.InvalidCount, Valid: im.valid}
	}
	if im.tx == nil {
		return im.rep, nil // no valid line: nothing to write
	}
	res, err := im.tx.Commit(ctx)
	im.tx = nil
	if err != nil {
		return im.rep, err
	}
	im.rep.LeadImportResult, im.rep.Imported = res, true
	return im.rep, nil
}

// leadImport is one ImportLeads under way.
type leadImport struct {
	pool      *pgxpool.Pool
	workspace string
	lr        *LeadReader
	opts      ImportOptions
	rep       ImportReport
	// tx is the import's transaction, begun with the first batch.
	tx    *store.LeadImporter
	batch []store.LeadImport
	valid int
}

// read reads every line, writing a batch whenever one is full and the
// last one at the end.
func (im *leadImport) read(ctx context.Context) error {
	for {
		rec, bad, err := im.lr.Next()
		if errors.Is(err, io.EOF) {
			return im.flush(ctx)
		}
		if err != nil {
			return err
		}
		if bad != nil {
			im.invalid(*bad)
			continue
		}
		im.valid++
		im.batch = append(im.batch, rec)
		if len(im.batch) == im.opts.Batch {
			if err := im.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// invalid counts an invalid line, keeps the first ImportReportedInvalidMax
// and shows each to OnInvalid.
func (im *leadImport) invalid(le LineError) {
	im.rep.InvalidCount++
	if len(im.rep.Invalid) < ImportReportedInvalidMax {
		im.rep.Invalid = append(im.rep.Invalid, le)
	}
	if im.opts.OnInvalid != nil {
		im.opts.OnInvalid(le)
	}
}

// flush writes the batch; a line repeating an earlier external_id is
// invalid.
func (im *leadImport) flush(ctx context.Context) error {
	if len(im.batch) == 0 {
		return nil
	}
	if im.tx == nil {
		tx, err := store.BeginLeadImport(ctx, im.pool, im.workspace)
		if err != nil {
			return err
		}
		im.tx = tx
	}
	repeats, err := im.tx.Add(ctx, im.batch)
	if err != nil {
		return err
	}
	for _, r := range repeats {
		im.valid--
		im.invalid(LineError{Line: r.Line, Reason: fmt.Sprintf("external_id %q already appears on line %d", r.ExternalID, r.FirstLine)})
	}
	im.batch = im.batch[:0]
	if im.opts.Progress != nil {
		im.opts.Progress(im.lr.InputOffset())
	}
	return nil
}

// rollback discards an import that did not commit.
func (im *leadImport) rollback(ctx context.Context) {
	if im.tx != nil {
		im.tx.Rollback(ctx)
	}
}
