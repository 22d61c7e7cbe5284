package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// LeadImport is one lead to import; empty Email, ExternalID and Timezone
// are stored as NULL.
type LeadImport struct {
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
	// Queued leads got a new pending enrichment row.
	Queued int64 `json:"queued"`
	// Closed enrichment rows whose lead now came with an address.
	Closed int64 `json:"closed"`
}

// ImportLeads writes leads into the named workspace (created if missing)
// in one transaction: COPY into a staging table, then one merge statement.
// Either every lead is imported or none is.
func ImportLeads(ctx context.Context, pool *pgxpool.Pool, workspace string, leads []LeadImport) (LeadImportResult, error) {
	var res LeadImportResult
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, query("leads_workspace_ensure"), workspace).Scan(&res.WorkspaceID, &res.WorkspaceCreated); err != nil {
			return fmt.Errorf("workspace %q: %w", workspace, err)
		}
		if _, err := tx.Exec(ctx, query("leads_import_stage")); err != nil {
			return err
		}
		src := pgx.CopyFromSlice(len(leads), func(i int) ([]any, error) {
			l := leads[i]
			return []any{nullText(l.ExternalID), l.FirstName, l.LastName, l.Company, l.Domain, nullText(l.Email), nullText(l.Timezone)}, nil
		})
		cols := []string{"external_id", "first_name", "last_name", "company", "company_domain", "email", "timezone"}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"lead_import"}, cols, src); err != nil {
			return fmt.Errorf("copying leads: %w", err)
		}
		return tx.QueryRow(ctx, query("leads_import_merge"), res.WorkspaceID).Scan(&res.Inserted, &res.Updated, &res.Queued, &res.Closed)
	})
	if err != nil {
		return LeadImportResult{}, fmt.Errorf("importing leads: %w", err)
	}
	return res, nil
}

// nullText maps "" to NULL.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
