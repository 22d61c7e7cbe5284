package store

import (
	"context"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// EnrollmentMarks is what MarkEnrollments changed.
type EnrollmentMarks struct {
	// Found counts the given ids that exist; Marked the active ones that
	// ended; Suppressed the addresses newly suppressed.
	Found      int64 `json:"found"`
	Marked     int64 `json:"marked"`
	Suppressed int64 `json:"suppressed"`
}

// MarkEnrollments ends the given enrollments as replied, unsubscribed or
// bounced in one statement, and suppresses their addresses with the
// reason suppress unless it is empty; see queries/ops_enrollment_mark.sql.
func MarkEnrollments(ctx context.Context, db DBTX, ids []int64, status enrollment.Status, suppress string) (EnrollmentMarks, error) {
	r, err := sqlcdb.New(db).OpsEnrollmentMark(ctx, sqlcdb.OpsEnrollmentMarkParams{Ids: ids, Status: string(status), Suppress: suppress})
	return EnrollmentMarks{Found: r.Found, Marked: r.Marked, Suppressed: r.Suppressed}, err
}
