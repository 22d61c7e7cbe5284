package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// Audit is one operator action (requeue, breaker reset/open, enrollment
// mark, ...) as the audit log records it: who, what, the filters (stored as
// JSON), and how many rows it affected.
type Audit struct {
	Actor, Action string
	Filters       any
	Affected      int64
}

// InsertAudit records a. Run it in the action's transaction so both land
// or neither.
func InsertAudit(ctx context.Context, db DBTX, a Audit) (id int64, err error) {
	js, err := json.Marshal(a.Filters)
	if err != nil {
		return 0, fmt.Errorf("audit log: filters: %w", err)
	}
	id, err = sqlcdb.New(db).AuditInsert(ctx, sqlcdb.AuditInsertParams{Actor: a.Actor, Action: a.Action, Filters: js, Affected: a.Affected})
	if err != nil {
		return 0, fmt.Errorf("audit log: %w", err)
	}
	return id, nil
}
