package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// InsertAudit records one operator action (requeue, breaker reset/open,
// enrollment mark, ...): who, what, the filters as JSON, and how many rows
// it affected. Run it in the action's transaction so both land or neither.
func InsertAudit(ctx context.Context, db DBTX, actor, action string, filters any, affected int64) (id int64, err error) {
	js, err := json.Marshal(filters)
	if err != nil {
		return 0, fmt.Errorf("audit log: filters: %w", err)
	}
	id, err = sqlcdb.New(db).AuditInsert(ctx, sqlcdb.AuditInsertParams{Actor: actor, Action: action, Filters: js, Affected: affected})
	if err != nil {
		return 0, fmt.Errorf("audit log: %w", err)
	}
	return id, nil
}
