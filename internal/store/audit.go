package store

import (
	"context"
	"fmt"
)

// InsertAudit records one operator action (requeue, breaker reset/open,
// enrollment mark, ...): who, what, the filters as JSON, and how many rows
// it affected. Run it in the action's transaction so both land or neither.
func InsertAudit(ctx context.Context, db DBTX, actor, action string, filters any, affected int64) (id int64, err error) {
	if err := db.QueryRow(ctx, query("audit_insert"), actor, action, filters, affected).Scan(&id); err != nil {
		return 0, fmt.Errorf("audit log: %w", err)
	}
	return id, nil
}
