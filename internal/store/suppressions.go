package store

import (
	"context"
	"fmt"
	"time"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// SuppressionRow is one row of a workspace's suppression list.
type SuppressionRow struct {
	// Email is the address; empty for a forgotten person (only the hash).
	Email     string
	SHA256    []byte
	Reason    string
	CreatedAt time.Time
}

// InsertSuppressions adds rows to the workspace's suppression list in one
// statement (queries/byhand/suppressions_import.sql): an address already
// there keeps its row, a forgotten one keeps only its hash. A row's
// SHA256 is used only when it has no Email (Postgres hashes addresses
// itself). It returns how many rows were added.
func InsertSuppressions(ctx context.Context, db DBTX, workspaceID int64, rows []SuppressionRow) (int64, error) {
	emails, hashes := make([]*string, len(rows)), make([][]byte, len(rows))
	reasons, created := make([]string, len(rows)), make([]*time.Time, len(rows))
	for i, r := range rows {
		if r.Email != "" {
			emails[i] = &r.Email
		} else {
			hashes[i] = r.SHA256
		}
		reasons[i] = r.Reason
		if !r.CreatedAt.IsZero() {
			created[i] = &r.CreatedAt
		}
	}
	var added int64
	if err := db.QueryRow(ctx, query("suppressions_import"), workspaceID, emails, hashes, reasons, created).Scan(&added); err != nil {
		return 0, fmt.Errorf("adding suppressions: %w", err)
	}
	return added, nil
}

// EachSuppression calls fn with each row of the workspace's suppression
// list, oldest first, streaming (the list may be large).
func EachSuppression(ctx context.Context, db DBTX, workspaceID int64, fn func(SuppressionRow) error) error {
	rows, err := db.Query(ctx, query("suppressions_export"), workspaceID)
	if err != nil {
		return fmt.Errorf("reading suppressions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r SuppressionRow
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

// KeepForgotten suppresses the hash sha256 in each workspace, with no
// address; it returns how many rows were added.
func KeepForgotten(ctx context.Context, db DBTX, sha256 []byte, workspaceIDs []int64) (int64, error) {
	n, err := sqlcdb.New(db).SuppressionsForgetKeep(ctx, sqlcdb.SuppressionsForgetKeepParams{EmailSha256: sha256, WorkspaceIds: workspaceIDs})
	if err != nil {
		return 0, fmt.Errorf("keeping the forgotten address suppressed: %w", err)
	}
	return n, nil
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
