package store

import (
	"context"
	"fmt"

	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// GrowRamps moves every due warm-up ramp one step (see
// queries/email_ramp_grow.sql) and returns how many mailboxes it looked at.
func GrowRamps(ctx context.Context, db DBTX) (int64, error) {
	n, err := sqlcdb.New(db).EmailRampGrow(ctx)
	if err != nil {
		return 0, fmt.Errorf("grow warm-up ramps: %w", err)
	}
	return n, nil
}
