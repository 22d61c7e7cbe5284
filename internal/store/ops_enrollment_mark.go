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
// bounced, and suppresses their leads' addresses with the reason suppress
// unless it is empty (through Suppress); see queries/ops_enrollment_mark.sql.
func MarkEnrollments(ctx context.Context, db DBTX, ids []int64, status enrollment.Status, suppress string) (EnrollmentMarks, error) {
	rows, err := sqlcdb.New(db).OpsEnrollmentMark(ctx, sqlcdb.OpsEnrollmentMarkParams{Ids: ids, Status: string(status)})
	if err != nil {
		return EnrollmentMarks{}, err
	}
	var m EnrollmentMarks
	var sups []Suppression
	for _, r := range rows {
		m.Found++
		if r.Marked {
			m.Marked++
		}
		if suppress != "" && r.Email != "" {
			sups = append(sups, Suppression{WorkspaceID: r.WorkspaceID, Email: r.Email, Reason: suppress})
		}
	}
	m.Suppressed, err = Suppress(ctx, db, sups)
	return m, err
}
