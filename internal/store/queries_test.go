package store_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Every query must parse and resolve against the migrated schema: a renamed
// column or a typo fails here, not in a tick at 5 a.m. A typed query is
// prepared as sqlc generated it (sqlc.arg/sqlc.narg rewritten to $n, which
// Postgres cannot parse in the source file); a hand-run one as its file
// with its @names numbered, as the store sends it.
func TestEveryQueryPrepares(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	// Queries are read from the source tree: the store embeds each
	// hand-run one into its own variable (TestByHandStatementsTyped).
	typed, err := filepath.Glob(filepath.Join("queries", "*.sql"))
	if err != nil || len(typed) == 0 {
		t.Fatalf("no embedded queries: %v", err)
	}
	byHand, err := filepath.Glob(filepath.Join("queries", "byhand", "*.sql"))
	if err != nil || len(byHand) == 0 {
		t.Fatalf("no hand-run queries: %v", err)
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	generated := generatedSQL(t)
	texts := map[string]string{}
	for _, p := range typed {
		name := strings.TrimSuffix(filepath.Base(p), ".sql")
		sql, ok := generated[name]
		if !ok {
			t.Errorf("%s has no generated query in sqlcdb (run `sqlc generate`)", name)
			continue
		}
		texts[name] = sql
	}
	for _, p := range byHand {
		// As the store sends it: each @name numbered $n (store.byName).
		sql, _, err := pgx.NamedArgs{}.RewriteQuery(ctx, nil, read(p), nil)
		if err != nil {
			t.Fatal(err)
		}
		texts[strings.TrimSuffix(filepath.Base(p), ".sql")] = sql
	}
	// The lead import merges from temp tables the stage and seen queries
	// create for the life of its transaction.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, name := range []string{"leads_import_stage", "leads_import_seen"} {
		if _, err := tx.Exec(ctx, texts[name]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for name, sql := range texts {
		// A savepoint each, so one failure does not abort the rest.
		sp, err := tx.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sp.Conn().Prepare(ctx, "", sql); err != nil {
			t.Errorf("%s does not prepare against the schema: %v", name, err)
		}
		if err := sp.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// generatedSQL reads the query text sqlc wrote into sqlcdb, by query file
// name: the one string constant of each <name>.sql.go. The constants are
// unexported, so they are read from the source.
func generatedSQL(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("sqlcdb", "*.sql.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated queries in sqlcdb: %v", err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".sql.go")
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && strings.HasPrefix(s, "-- name: ") {
				if _, dup := out[name]; dup {
					t.Fatalf("%s holds more than one query", f)
				}
				out[name] = s
			}
			return true
		})
	}
	return out
}
