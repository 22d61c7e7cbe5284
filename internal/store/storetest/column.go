package storetest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
)

// Column runs sql (one column of type T) on db and returns its rows; any
// error ends the test, naming the statement.
func Column[T any](t testing.TB, db store.DBTX, sql string, args ...any) []T {
	t.Helper()
	rows, err := db.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}
