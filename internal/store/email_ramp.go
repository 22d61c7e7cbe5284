package store

import (
	"context"
	"fmt"
)

// GrowRamps moves every due warm-up ramp one step (see
// queries/email_ramp_grow.sql) and returns how many mailboxes it looked at.
func GrowRamps(ctx context.Context, db DBTX) (int64, error) {
	tag, err := db.Exec(ctx, query("email_ramp_grow"))
	if err != nil {
		return 0, fmt.Errorf("grow warm-up ramps: %w", err)
	}
	return tag.RowsAffected(), nil
}
