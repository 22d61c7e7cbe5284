package benchstore_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// Every demo and bench query prepares against the migrated schema, as
// the store's own do (TestEveryQueryPrepares): as sqlc generated it into
// benchdb, one per queries/*.sql file.
func TestEveryBenchQueryPrepares(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("queries", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no queries: %v", err)
	}
	generated := map[string]string{}
	gen, _ := filepath.Glob(filepath.Join("benchdb", "*.sql.go"))
	fset := token.NewFileSet()
	for _, g := range gen {
		file, err := parser.ParseFile(fset, g, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "-- name: ") {
					generated[strings.TrimSuffix(filepath.Base(g), ".sql.go")] = s
				}
			}
			return true
		})
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		sql, ok := generated[name]
		if !ok {
			t.Errorf("%s has no generated query in benchdb (run `sqlc generate`)", name)
			continue
		}
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Conn().Prepare(ctx, "", sql); err != nil {
			t.Errorf("%s does not prepare against the schema: %v", name, err)
		}
		_ = tx.Rollback(ctx)
	}
	if len(generated) != len(files) {
		t.Errorf("benchdb holds %d queries, queries/ %d: remove the stale ones and run `sqlc generate`", len(generated), len(files))
	}
}

// Issue 41: the production store holds no demo or bench query; they are
// this package's, which rindactl does not link.
func TestStoreHoldsNoBenchOrDemoQuery(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"bench_*.sql", "demo_*.sql", "byhand/bench_*.sql", "byhand/demo_*.sql"} {
		found, _ := filepath.Glob(filepath.Join("..", "queries", pattern))
		for _, f := range found {
			t.Errorf("%s is in internal/store: move it to internal/store/benchstore/queries", f)
		}
	}
}
