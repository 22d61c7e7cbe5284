package store

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// LeadImport is one lead to import; empty Email, ExternalID and Timezone
// are stored as NULL. Line is its line in the source file (for reports).
type LeadImport struct {
	Line       int
	ExternalID string
	FirstName  string
	LastName   string
	Company    string
	Domain     string
	Email      string
	Timezone   string
}

// LeadImportResult counts what an import did.
type LeadImportResult struct {
	WorkspaceID      int64 `json:"workspace_id"`
	WorkspaceCreated bool  `json:"workspace_created"`
	Inserted         int64 `json:"inserted"`
	Updated          int64 `json:"updated"`
	// Merged counts lines without an external_id that were a lead the
	// workspace already had, or another line of the file had (same address,
	// or without one the same name at the same domain): merged, not
	// duplicated.
	Merged int64 `json:"duplicates_merged"`
	// Queued leads got a new pending enrichment row.
	Queued int64 `json:"queued"`
	// Closed enrichment rows whose lead now came with an address.
	Closed int64 `json:"closed"`
	// Forgotten counts lines left out because their address belongs to a
	// person forgotten in the workspace (lead forget).
	Forgotten int64 `json:"forgotten"`
}

// LeadRepeat is a line whose external_id an earlier line of the same
// import already used.
type LeadRepeat struct {
	Line       int
	ExternalID string
	FirstLine  int
}

// The import's statements, in the order they run: stage and seen create
// its temp tables (once per import), repeats, forgotten, merge and clear
// run per batch.
var (
	//go:embed queries/byhand/leads_import_stage.sql
	leadsImportStageSQL string
	//go:embed queries/byhand/leads_import_seen.sql
	leadsImportSeenSQL string
	//go:embed queries/byhand/leads_import_repeats.sql
	leadsImportRepeatsSQL string
	//go:embed queries/byhand/leads_import_forgotten.sql
	leadsImportForgottenSQL string
	//go:embed queries/byhand/leads_import_merge.sql
	leadsImportMergeSQL string
	//go:embed queries/byhand/leads_import_clear.sql
	leadsImportClearSQL string
)

// leadsImportForgottenParams are leads_import_forgotten.sql's parameters.
type leadsImportForgottenParams struct {
	WorkspaceID int64 `db:"workspace_id"`
}

var leadsImportForgottenStmt = byName[leadsImportForgottenParams](leadsImportForgottenSQL)

// leadsImportMergeParams are leads_import_merge.sql's parameters.
type leadsImportMergeParams struct {
	WorkspaceID int64 `db:"workspace_id"`
}

var leadsImportMergeStmt = byName[leadsImportMergeParams](leadsImportMergeSQL)

// LeadImporter writes one import in batches inside one transaction, so a
// file of any size imports with bounded memory and every statement stays
// short (each batch is one COPY into a staging table and one merge), while
// the import as a whole is all or nothing: Commit or Rollback.
type LeadImporter struct {
	tx  pgx.Tx
	res LeadImportResult
}

// BeginLeadImport opens the import's transaction and creates the workspace
// if it does not exist.
func BeginLeadImport(ctx context.Context, pool *pgxpool.Pool, workspace string) (*LeadImporter, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("importing leads: %w", err)
	}
	im := &LeadImporter{tx: tx}
	ws, err := sqlcdb.New(tx).LeadsWorkspaceEnsure(ctx, workspace)
	if err != nil {
		im.Rollback(ctx)
		return nil, fmt.Errorf("workspace %q: %w", workspace, err)
	}
	im.res.WorkspaceID, im.res.WorkspaceCreated = ws.ID, ws.Created
	for _, sql := range []string{leadsImportStageSQL, leadsImportSeenSQL} {
		if _, err := tx.Exec(ctx, sql); err != nil {
			im.Rollback(ctx)
			return nil, fmt.Errorf("importing leads: %w", err)
		}
	}
	return im, nil
}

// Add imports one batch. Lines whose external_id an earlier line used are
// left out and returned; the caller decides whether that fails the import.
func (im *LeadImporter) Add(ctx context.Context, leads []LeadImport) ([]LeadRepeat, error) {
	src := pgx.CopyFromSlice(len(leads), func(i int) ([]any, error) {
		l := leads[i]
		return []any{int32(l.Line), nullText(l.ExternalID), l.FirstName, l.LastName, l.Company, l.Domain, nullText(l.Email), nullText(l.Timezone)}, nil
	})
	cols := []string{"line", "external_id", "first_name", "last_name", "company", "company_domain", "email", "timezone"}
	if _, err := im.tx.CopyFrom(ctx, pgx.Identifier{"lead_import"}, cols, src); err != nil {
		return nil, fmt.Errorf("copying leads: %w", err)
	}
	rows, err := im.tx.Query(ctx, leadsImportRepeatsSQL)
	if err != nil {
		return nil, fmt.Errorf("checking external_ids: %w", err)
	}
	repeats, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LeadRepeat, error) {
		var rp LeadRepeat
		return rp, r.Scan(&rp.Line, &rp.ExternalID, &rp.FirstLine)
	})
	if err != nil {
		return nil, fmt.Errorf("checking external_ids: %w", err)
	}
	tag, err := im.tx.Exec(ctx, leadsImportForgottenStmt.sql, leadsImportForgottenStmt.args(leadsImportForgottenParams{WorkspaceID: im.res.WorkspaceID})...)
	if err != nil {
		return nil, fmt.Errorf("checking forgotten addresses: %w", err)
	}
	im.res.Forgotten += tag.RowsAffected()
	var ins, upd, merged, queued, closed int64
	if err := im.tx.QueryRow(ctx, leadsImportMergeStmt.sql, leadsImportMergeStmt.args(leadsImportMergeParams{WorkspaceID: im.res.WorkspaceID})...).Scan(&ins, &upd, &merged, &queued, &closed); err != nil {
		return nil, fmt.Errorf("merging leads: %w", err)
	}
	im.res.Inserted += ins
	im.res.Updated += upd
	im.res.Merged += merged
	im.res.Queued += queued
	im.res.Closed += closed
	if _, err := im.tx.Exec(ctx, leadsImportClearSQL); err != nil {
		return nil, fmt.Errorf("importing leads: %w", err)
	}
	return repeats, nil
}

// Commit makes the whole import visible at once.
func (im *LeadImporter) Commit(ctx context.Context) (LeadImportResult, error) {
	if err := im.tx.Commit(ctx); err != nil {
		return LeadImportResult{}, fmt.Errorf("importing leads: %w", err)
	}
	return im.res, nil
}

// Rollback discards the import; safe after Commit.
func (im *LeadImporter) Rollback(ctx context.Context) {
	_ = im.tx.Rollback(context.WithoutCancel(ctx))
}

// ImportBatchDefault is how many lines one batch stages and merges: large
// enough to amortise a round trip, small enough that each statement stays
// far below statement_timeout and memory stays flat.
const ImportBatchDefault = 5000

// nullText maps "" to NULL.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
