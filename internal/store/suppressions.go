package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

//go:embed queries/byhand/suppressions_insert.sql
var suppressionsInsertSQL string

// suppressionsInsertParams are suppressions_insert.sql's parameters: one
// array per column, an element per row (Emails NULL for a forgotten
// person's row, Hashes NULL where Postgres hashes the address).
type suppressionsInsertParams struct {
	WorkspaceIDs []int64      `db:"workspace_ids"`
	Emails       []*string    `db:"emails"`
	Hashes       [][]byte     `db:"hashes"`
	Reasons      []string     `db:"reasons"`
	CreatedAt    []*time.Time `db:"created_at"`
}

var suppressionsInsertStmt = byName[suppressionsInsertParams](suppressionsInsertSQL)

// Suppress adds rows to their workspaces' suppression lists in one
// statement (queries/byhand/suppressions_insert.sql) and returns how many
// were new. It is the one writer of suppressions outside the email tick's
// grouped settle. An address is written canonical (address.Key, as Settle
// does), so one spelling's suppression covers all; Postgres hashes it. A
// row without an address is a forgotten person's: its SHA256 only. An
// address already listed keeps its row, and a forgotten one is not stored
// again.
func Suppress(ctx context.Context, db DBTX, sups []Suppression) (int64, error) {
	if len(sups) == 0 {
		return 0, nil
	}
	n := len(sups)
	p := suppressionsInsertParams{WorkspaceIDs: make([]int64, n), Emails: make([]*string, n), Hashes: make([][]byte, n),
		Reasons: make([]string, n), CreatedAt: make([]*time.Time, n)}
	for i, s := range sups {
		p.WorkspaceIDs[i], p.Reasons[i] = s.WorkspaceID, s.Reason
		if s.Email != "" {
			key := address.Key(s.Email)
			p.Emails[i] = &key
		} else {
			p.Hashes[i] = s.SHA256
		}
		if !s.CreatedAt.IsZero() {
			p.CreatedAt[i] = &s.CreatedAt
		}
	}
	var added int64
	if err := db.QueryRow(ctx, suppressionsInsertStmt.sql, suppressionsInsertStmt.args(p)...).Scan(&added); err != nil {
		return 0, fmt.Errorf("suppress: %w", err)
	}
	return added, nil
}

//go:embed queries/byhand/suppressions_export.sql
var suppressionsExportSQL string

// suppressionsExportParams are suppressions_export.sql's parameters.
type suppressionsExportParams struct {
	WorkspaceID int64 `db:"workspace_id"`
}

var suppressionsExportStmt = byName[suppressionsExportParams](suppressionsExportSQL)

// EachSuppression calls fn with each row of the workspace's suppression
// list, oldest first, streaming (the list may be large).
func EachSuppression(ctx context.Context, db DBTX, workspaceID int64, fn func(Suppression) error) error {
	rows, err := db.Query(ctx, suppressionsExportStmt.sql, suppressionsExportStmt.args(suppressionsExportParams{WorkspaceID: workspaceID})...)
	if err != nil {
		return fmt.Errorf("reading suppressions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r := Suppression{WorkspaceID: workspaceID}
		if err := rows.Scan(&r.Email, &r.SHA256, &r.Reason, &r.CreatedAt); err != nil {
			return fmt.Errorf("reading suppressions: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading suppressions: %w", err)
	}
	return nil
}

// ForgottenLeads is what ForgetLeads erased in one workspace.
type ForgottenLeads struct {
	WorkspaceID int64
	Leads       int64
	Enrollments int64
}

// ForgetLeads deletes the leads holding the address (any of spellings,
// lower case), in workspace or in all (nil), with their enrollments, sends
// and enrichment rows.
func ForgetLeads(ctx context.Context, db DBTX, spellings []string, workspaceID *int64) ([]ForgottenLeads, error) {
	rows, err := sqlcdb.New(db).SuppressionsForgetLeads(ctx, sqlcdb.SuppressionsForgetLeadsParams{Emails: spellings, WorkspaceID: workspaceID})
	return convertRows(rows, err, "forgetting leads", func(r sqlcdb.SuppressionsForgetLeadsRow) ForgottenLeads {
		return ForgottenLeads{WorkspaceID: r.WorkspaceID, Leads: r.Leads, Enrollments: r.Enrollments}
	})
}

// ForgetRecipients deletes the address (any of spellings) from the
// campaigns' recipient records, returning the workspace of each row deleted.
func ForgetRecipients(ctx context.Context, db DBTX, spellings []string, workspaceID *int64) ([]int64, error) {
	ws, err := sqlcdb.New(db).SuppressionsForgetRecipients(ctx, sqlcdb.SuppressionsForgetRecipientsParams{Emails: spellings, WorkspaceID: workspaceID})
	if err != nil {
		return nil, fmt.Errorf("forgetting campaign recipients: %w", err)
	}
	return ws, nil
}

// ForgetSuppressedAddresses deletes the suppression rows that hold the
// address with hash sha256, returning the workspace of each.
func ForgetSuppressedAddresses(ctx context.Context, db DBTX, sha256 []byte, workspaceID *int64) ([]int64, error) {
	ws, err := sqlcdb.New(db).SuppressionsForgetAddresses(ctx, sqlcdb.SuppressionsForgetAddressesParams{EmailSha256: sha256, WorkspaceID: workspaceID})
	if err != nil {
		return nil, fmt.Errorf("forgetting suppressed addresses: %w", err)
	}
	return ws, nil
}

// ScrubText replaces what pattern matches (case-insensitive) with
// [forgotten] in the free-text columns that may hold an address; it
// returns the rows changed.
func ScrubText(ctx context.Context, db DBTX, pattern string) (int64, error) {
	n, err := sqlcdb.New(db).SuppressionsForgetScrub(ctx, pattern)
	if err != nil {
		return 0, fmt.Errorf("scrubbing the address from events and errors: %w", err)
	}
	return n, nil
}

// WorkspaceNames are the names of the workspaces ids, sorted.
func WorkspaceNames(ctx context.Context, db DBTX, ids []int64) ([]string, error) {
	names, err := sqlcdb.New(db).WorkspaceNames(ctx, ids)
	return convertRows(names, err, "workspace names", func(n string) string { return n })
}
