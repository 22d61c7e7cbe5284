package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store"
)

// Dump renders every row of every table of db as JSON text, one table
// after another: what a test scans for a secret that must be stored
// nowhere.
func Dump(t testing.TB, db store.DBTX) string {
	t.Helper()
	tables := Column[string](t, db, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`)
	var b strings.Builder
	for _, tbl := range tables {
		var text string
		q := `SELECT coalesce(string_agg(row_to_json(t)::text, E'\n'), '') FROM ` + pgx.Identifier{tbl}.Sanitize() + ` t`
		if err := db.QueryRow(context.Background(), q).Scan(&text); err != nil {
			t.Fatalf("dump %s: %v", tbl, err)
		}
		fmt.Fprintf(&b, "-- %s\n%s\n", tbl, text)
	}
	return b.String()
}
