package sequence

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
)

// MarkEnrollments ends the active enrollments among ids as stop, one of
// the ends an operator reports by hand: enrollment.Replied, or
// enrollment.Unsubscribed, which also suppresses the lead's address in its
// workspace (bounces the inbox tick finds itself). It writes one
// enrollment.mark audit row for actor in the same transaction.
func MarkEnrollments(ctx context.Context, pool *pgxpool.Pool, ids []int64, stop enrollment.Status, actor string) (store.EnrollmentMarks, error) {
	suppress := ""
	switch stop {
	case enrollment.Replied:
	case enrollment.Unsubscribed:
		suppress = string(stop)
	default:
		return store.EnrollmentMarks{}, fmt.Errorf("mark enrollments %q: want %q or %q", stop, enrollment.Replied, enrollment.Unsubscribed)
	}
	var marks store.EnrollmentMarks
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var err error
		if marks, err = store.MarkEnrollments(ctx, tx, ids, stop, suppress); err != nil {
			return err
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "enrollment.mark", Filters: map[string]any{"status": stop, "ids": ids}, Affected: marks.Marked})
		return err
	})
	return marks, err
}
