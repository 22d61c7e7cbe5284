package store

import (
	"context"
	"fmt"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// Suppress adds addresses to their workspaces' suppression lists and
// returns how many were new. Every suppression outside the email tick's
// grouped settle goes through here; the address is written canonical
// (address.Key, as Settle does), so one spelling's suppression covers all.
func Suppress(ctx context.Context, db DBTX, sups []Suppression) (int64, error) {
	if len(sups) == 0 {
		return 0, nil
	}
	ws, emails, reasons := make([]int64, len(sups)), make([]string, len(sups)), make([]string, len(sups))
	for i, s := range sups {
		ws[i], emails[i], reasons[i] = s.WorkspaceID, address.Key(s.Email), s.Reason
	}
	n, err := sqlcdb.New(db).SuppressionsInsert(ctx, sqlcdb.SuppressionsInsertParams{WorkspaceIds: ws, Emails: emails, Reasons: reasons})
	if err != nil {
		return 0, fmt.Errorf("suppress: %w", err)
	}
	return n, nil
}
