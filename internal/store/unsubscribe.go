package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store/sqlcdb"
)

// unsubscribeKeySize is the length of a workspace's token key.
const unsubscribeKeySize = 32

// UnsubscribeKey returns the workspace's unsubscribe token key, creating
// it on first use. Two processes creating it at once agree on one key.
func UnsubscribeKey(ctx context.Context, db DBTX, workspaceID int64) ([]byte, error) {
	q := sqlcdb.New(db)
	key, err := q.UnsubscribeKeyGet(ctx, workspaceID)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("workspace %d unsubscribe key: %w", workspaceID, err)
	}
	fresh := make([]byte, unsubscribeKeySize)
	_, _ = rand.Read(fresh) // never fails (crypto/rand)
	created, err := q.UnsubscribeKeyInsert(ctx, sqlcdb.UnsubscribeKeyInsertParams{WorkspaceID: workspaceID, Key: fresh})
	if err != nil {
		return nil, fmt.Errorf("workspace %d unsubscribe key: %w", workspaceID, err)
	}
	if len(created) == 1 {
		return created[0], nil
	}
	// Another process created it between our two statements.
	if key, err = q.UnsubscribeKeyGet(ctx, workspaceID); err != nil {
		return nil, fmt.Errorf("workspace %d unsubscribe key: %w", workspaceID, err)
	}
	return key, nil
}

// UnsubscribeTarget is what an unsubscribe token names.
type UnsubscribeTarget struct {
	WorkspaceID int64
	// Key is the workspace's token key, to check the token's MAC.
	Key []byte
	// Email is the lead's address as stored (trimmed, lower case); empty
	// when the lead has none.
	Email string
	// Used: the token was used already.
	Used bool
}

// FindUnsubscribeTarget looks up the enrollment a token names; false when
// it does not exist (or its workspace never had a key, so no token of it
// was ever sent).
func FindUnsubscribeTarget(ctx context.Context, db DBTX, enrollmentID int64) (UnsubscribeTarget, bool, error) {
	r, err := sqlcdb.New(db).UnsubscribeTarget(ctx, enrollmentID)
	if errors.Is(err, pgx.ErrNoRows) {
		return UnsubscribeTarget{}, false, nil
	}
	if err != nil {
		return UnsubscribeTarget{}, false, fmt.Errorf("unsubscribe: enrollment %d: %w", enrollmentID, err)
	}
	return UnsubscribeTarget{WorkspaceID: r.WorkspaceID, Key: r.Key, Email: r.Email, Used: r.Used}, true, nil
}

// UnsubscribeResult is what applying a token changed.
type UnsubscribeResult struct {
	// Recorded is false when the token had been used already: nothing
	// changed.
	Recorded bool `json:"recorded"`
	// Ended counts the enrollments that ended as unsubscribed.
	Ended int64 `json:"ended"`
	// Suppressed: the address was newly suppressed.
	Suppressed bool `json:"suppressed"`
}

// ApplyUnsubscribe uses the token of enrollment enrollmentID (its MAC
// already checked) and suppresses the address, in one transaction (a
// savepoint when db is one); see queries/unsubscribe_apply.sql. via says
// who used it: http, mailto or apply.
func ApplyUnsubscribe(ctx context.Context, db TxDB, enrollmentID int64, t UnsubscribeTarget, via string) (UnsubscribeResult, error) {
	var res UnsubscribeResult
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		r, err := sqlcdb.New(tx).UnsubscribeApply(ctx, sqlcdb.UnsubscribeApplyParams{EnrollmentID: enrollmentID, WorkspaceID: t.WorkspaceID, Via: via, Email: t.Email})
		if err != nil || r.Recorded == 0 {
			return err
		}
		res = UnsubscribeResult{Recorded: true, Ended: r.Ended}
		n, err := Suppress(ctx, tx, []Suppression{{WorkspaceID: t.WorkspaceID, Email: t.Email, Reason: string(enrollment.Unsubscribed)}})
		res.Suppressed = n > 0
		return err
	})
	if err != nil {
		return UnsubscribeResult{}, fmt.Errorf("unsubscribe: enrollment %d: %w", enrollmentID, err)
	}
	return res, nil
}
