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
	rep := ImportReport{Invalid: []LineError{}}
	invalid := func(le LineError) {
		rep.InvalidCount++
		if len(rep.Invalid) < ImportReportedInvalidMax {
			rep.Invalid = append(rep.Invalid, le)
		}
		if opts.OnInvalid != nil {
			opts.OnInvalid(le)
		}
	}
	var im *store.LeadImporter
	defer func() {
		if im != nil {
			im.Rollback(ctx)
		}
	}()
	batch := make([]store.LeadImport, 0, opts.Batch)
	valid := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if im == nil {
			var err error
			if im, err = store.BeginLeadImport(ctx, pool, workspace); err != nil {
				return err
			}
		}
		repeats, err := im.Add(ctx, batch)
		if err != nil {
			return err
		}
		for _, r := range repeats {
			valid--
			invalid(LineError{Line: r.Line, Reason: fmt.Sprintf("external_id %q already appears on line %d", r.ExternalID, r.FirstLine)})
		}
		batch = batch[:0]
		if opts.Progress != nil {
			opts.Progress(lr.InputOffset())
		}
		return nil
	}
	for {
		rec, bad, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rep, err
		}
		if bad != nil {
			invalid(*bad)
			continue
		}
		valid++
		batch = append(batch, rec)
		if len(batch) == opts.Batch {
			if err := flush(); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(); err != nil {
		return rep, err
	}
	if rep.InvalidCount > 0 && !opts.SkipInvalid {
		return rep, &InvalidLinesError{Invalid: rep.InvalidCount, Valid: valid}
	}
	if im == nil {
		return rep, nil // no valid line: nothing to write
	}
	res, err := im.Commit(ctx)
	im = nil
	if err != nil {
		return rep, err
	}
	rep.LeadImportResult, rep.Imported = res, true
	return rep, nil
}
