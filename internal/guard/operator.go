package guard

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/store"
)

// BreakerTarget names one breaker the way an operator does: a workspace by
// name and a provider. Its actions run in their own transaction with their
// audit-log row, so no hand-made breaker change goes unrecorded.
type BreakerTarget struct {
	Workspace string
	Provider  string
}

// Reset closes the breaker now for actor and writes breaker_closed and a
// breaker.reset audit row. It reports whether there was anything to close;
// an unknown workspace is store.ErrNoWorkspace.
func (t BreakerTarget) Reset(ctx context.Context, pool *pgxpool.Pool, actor string) (closed bool, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ws, err := store.WorkspaceID(ctx, tx, t.Workspace)
		if err != nil {
			return err
		}
		if closed, err = ResetBreaker(ctx, tx, ws, t.Provider, "reset by "+actor); err != nil {
			return err
		}
		var affected int64
		if closed {
			affected = 1
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "breaker.reset", Filters: map[string]any{"workspace": t.Workspace, "provider": t.Provider}, Affected: affected})
		return err
	})
	return closed, err
}

// Open opens the breaker for openFor for actor, writes breaker_opened and a
// breaker.open audit row, and returns until when it refuses calls; an
// unknown workspace is store.ErrNoWorkspace.
func (t BreakerTarget) Open(ctx context.Context, pool *pgxpool.Pool, openFor time.Duration, reason, actor string) (until time.Time, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		ws, err := store.WorkspaceID(ctx, tx, t.Workspace)
		if err != nil {
			return err
		}
		if until, err = OpenBreaker(ctx, tx, ws, t.Provider, openFor, reason); err != nil {
			return err
		}
		_, err = store.InsertAudit(ctx, tx, store.Audit{Actor: actor, Action: "breaker.open", Filters: map[string]any{"workspace": t.Workspace, "provider": t.Provider, "for": openFor.String(), "reason": reason}, Affected: 1})
		return err
	})
	return until, err
}
