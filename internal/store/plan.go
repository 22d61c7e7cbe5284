package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A statement runs, by default, as a prepared statement cached per
// connection (pgx), planned the way Postgres chooses: a custom plan for its
// first five runs, then a generic one if that looks no costlier. A
// statement a tick runs many times on tables the tick grows, or whose
// generic plan misjudges it, needs its plan pinned, and the store pins a
// plan one way only: a plan rule, the planner settings the statement is
// sent with, ahead of it in the same round trip and local to its
// transaction (set_config(..., true)). A batch outside a transaction is
// one transaction of its own (one Sync), so the settings end with the
// statement; inside a caller's transaction they last until it ends. The
// rules are below; docs/architecture.md says which statements use which.
type planRule struct {
	settings string // the SELECT that sets them
}

var (
	// planPerRun plans the statement for its arguments and the tables as
	// they are at this run (a custom plan every time): for the claims,
	// whose cached plan would go stale within a tick (a RETURNING that
	// reads the sends a tick adds) or fit one argument badly (a small
	// workspace behind a big one's backlog). Planning costs a few
	// microseconds per claimed row.
	planPerRun = planRule{`SELECT set_config('plan_cache_mode', 'force_custom_plan', true)`}

	// planPerRunByKey is planPerRun with sequential scans off: for the
	// email claim, which must reach the rows it claims (and the
	// enrollments it updates) by key, and whose planner, on a table of a
	// few ten thousand rows, would rather hash all of enrollments to
	// update the 500 rows it picked, once per claim. JIT off: the scans
	// with no other way (campaigns) carry the planner's penalty for a
	// disabled scan in the plan's cost, which then passes every JIT
	// threshold, and compiling took a second per claim. Merge joins off:
	// when the rows claimed were the table's newest, the planner
	// merge-joined them back to enrollments along its whole primary key
	// (TestEmailClaimJoinsItsRowsByKey: 40,000 rows read for 500 claimed).
	planPerRunByKey = planRule{`SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('enable_seqscan', 'off', true), set_config('enable_mergejoin', 'off', true), set_config('jit', 'off', true)`}

	// planByMailbox is planPerRunByKey for the email claim when only some
	// mailboxes may be served (store.servedByMailbox): with index scans
	// off too, no walk of the claim index in due order, which would read
	// the older rows of the mailboxes not served; their rows are read
	// through the mailbox index (a bitmap scan), and lookups by key become
	// bitmap scans of one key.
	planByMailbox = planRule{`SELECT set_config('plan_cache_mode', 'force_custom_plan', true), set_config('enable_seqscan', 'off', true), set_config('enable_mergejoin', 'off', true), set_config('jit', 'off', true), set_config('enable_indexscan', 'off', true)`}

	// planByKey gives the statement one generic plan per connection, made
	// with sequential scans off, so it reaches rows by key: for the
	// settles, writes over arrays run too often to plan each time. Over
	// arrays of any length a generic plan looks costlier to Postgres than
	// a custom one, so left alone it would plan every run; and a plan made
	// while a table was small (a young install) would scan all of it, once
	// per group, as a tick grows it.
	planByKey = planRule{`SELECT set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)`}
)

// planDueByKey joins by nested loops only, so each row found reaches the
// rows it joins by key: for status's due groups (store.OpsEmailDue) when
// the due rows are few, which the planner cannot tell (it takes every
// active enrollment for due) and so would hash the whole leads table.
var planDueByKey = planRule{`SELECT set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true), set_config('jit', 'off', true)`}

// exec sends stmts under the rule in one round trip; they commit together
// unless db is a transaction.
func (r planRule) exec(ctx context.Context, db Batcher, stmts ...*pgx.QueuedQuery) error {
	b := &pgx.Batch{}
	b.Queue(r.settings)
	for _, q := range stmts {
		b.Queue(q.SQL, q.Arguments...)
	}
	return db.SendBatch(ctx, b).Close()
}

// on runs every statement given to the DBTX it returns under the rule, one
// round trip each: for a statement that returns rows, and for sqlc's
// generated methods (sqlcdb.New(planPerRun.on(db))).
func (r planRule) on(db Batcher) DBTX { return planned{db, r} }

type planned struct {
	db   Batcher
	rule planRule
}

func (p planned) send(ctx context.Context, sql string, args []any) pgx.BatchResults {
	b := &pgx.Batch{}
	b.Queue(p.rule.settings)
	b.Queue(sql, args...)
	return p.db.SendBatch(ctx, b)
}

func (p planned) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br := p.send(ctx, sql, args)
	if _, err := br.Exec(); err != nil {
		return pgconn.CommandTag{}, errors.Join(err, br.Close())
	}
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (p planned) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br := p.send(ctx, sql, args)
	if _, err := br.Exec(); err != nil {
		return nil, errors.Join(err, br.Close())
	}
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (p planned) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := p.Query(ctx, sql, args...)
	return batchRow{rows, err}
}

// batchRows ends the round trip (and gives back a pool's connection)
// when its rows are closed.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *batchRows) Close() {
	if r.br == nil {
		return
	}
	r.Rows.Close()
	r.err = r.br.Close()
	r.br = nil
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// batchRow is QueryRow's pgx.Row over batchRows.
type batchRow struct {
	rows pgx.Rows
	err  error
}

func (r batchRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}
