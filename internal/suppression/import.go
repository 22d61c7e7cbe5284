package suppression

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// ImportReportedInvalidMax bounds how many invalid lines an import keeps
// for its report; the count covers them all.
const ImportReportedInvalidMax = 1000

// importBatch is how many lines one statement adds.
const importBatch = 5000

// ImportReport is what Import did.
type ImportReport struct {
	Workspace string `json:"workspace"`
	// Lines counts the valid lines read; Added the rows new to the list
	// (the rest were on it already).
	Lines int64 `json:"lines"`
	Added int64 `json:"added"`
	// Invalid holds the first ImportReportedInvalidMax invalid lines;
	// InvalidCount counts them all.
	Invalid      []LineError `json:"invalid"`
	InvalidCount int         `json:"invalid_count"`
	Imported     bool        `json:"imported"`
}

// InvalidLinesError is an import that found invalid lines: nothing was
// imported.
type InvalidLinesError struct{ Invalid, Valid int }

func (e *InvalidLinesError) Error() string { return "invalid lines; nothing was imported" }

// Import adds the suppressions of the CSV behind r to the workspace's
// list, in one transaction and in batches: memory stays flat, and the
// import is all or nothing: one invalid line (reported with its number,
// every line is read) and nothing is imported. onInvalid, when set, sees
// each invalid line as it is found. The workspace must exist
// (store.ErrNoWorkspace).
func Import(ctx context.Context, pool *pgxpool.Pool, workspace string, r *Reader, onInvalid func(LineError)) (ImportReport, error) {
	rep := ImportReport{Workspace: workspace, Invalid: []LineError{}}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		wsID, err := store.WorkspaceID(ctx, tx, workspace)
		if err != nil {
			return err
		}
		batch := make([]store.Suppression, 0, importBatch)
		flush := func() error {
			if len(batch) == 0 || rep.InvalidCount > 0 {
				batch = batch[:0]
				return nil
			}
			n, err := store.Suppress(ctx, tx, batch)
			rep.Added += n
			batch = batch[:0]
			return err
		}
		for {
			e, lineErr, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			if lineErr != nil {
				rep.InvalidCount++
				if len(rep.Invalid) < ImportReportedInvalidMax {
					rep.Invalid = append(rep.Invalid, *lineErr)
				}
				if onInvalid != nil {
					onInvalid(*lineErr)
				}
				continue
			}
			rep.Lines++
			batch = append(batch, store.Suppression{WorkspaceID: wsID, Email: e.Email, SHA256: e.SHA256, Reason: e.Reason, CreatedAt: e.CreatedAt})
			if len(batch) == importBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if rep.InvalidCount > 0 {
			return &InvalidLinesError{Invalid: rep.InvalidCount, Valid: int(rep.Lines)}
		}
		return nil
	})
	if err != nil {
		rep.Added = 0
		return rep, fmt.Errorf("importing suppressions into %s: %w", workspace, err)
	}
	rep.Imported = true
	return rep, nil
}
