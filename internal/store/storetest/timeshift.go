package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ShiftTime moves the database's clock forward by d for everything that
// reads it through now(): every stored instant (each timestamptz column of
// every table) moves d into the past, in one transaction, so a row due in
// d is due now, a send of d ago ages out of a rolling window, a lease of d
// runs out. Postgres's own clock cannot be set; this is the same to every
// query that compares a stored time with now(). Triggers are off while it
// runs (session_replication_role), so none moves a value on its own.
func ShiftTime(tb testing.TB, pool *pgxpool.Pool, d time.Duration) {
	tb.Helper()
	if err := ShiftTimeBy(context.Background(), pool, d); err != nil {
		tb.Fatalf("storetest: shift time by %s: %v", d, err)
	}
}

// ShiftTimeBy is ShiftTime returning its error, for harnesses that shift
// time while other processes run.
func ShiftTimeBy(ctx context.Context, pool *pgxpool.Pool, d time.Duration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT c.table_name, array_agg(c.column_name::text ORDER BY c.column_name)
			FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
			  AND c.data_type = 'timestamp with time zone' AND c.is_generated = 'NEVER'
			GROUP BY c.table_name ORDER BY c.table_name`)
		if err != nil {
			return err
		}
		type table struct {
			name string
			cols []string
		}
		var tables []table
		for rows.Next() {
			var tb table
			if err := rows.Scan(&tb.name, &tb.cols); err != nil {
				return err
			}
			tables = append(tables, tb)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
			return err
		}
		for _, t := range tables {
			sets := make([]string, len(t.cols))
			for i, c := range t.cols {
				col := pgx.Identifier{c}.Sanitize()
				sets[i] = col + " = " + col + " - $1::interval"
			}
			sql := fmt.Sprintf("UPDATE %s SET %s", pgx.Identifier{t.name}.Sanitize(), strings.Join(sets, ", "))
			if _, err := tx.Exec(ctx, sql, d); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
		}
		return nil
	})
}
