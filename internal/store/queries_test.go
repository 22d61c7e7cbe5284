package store_test

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Every embedded query must parse and resolve against the migrated schema:
// a renamed column or a typo fails here, not in a tick at 5 a.m.
func TestEveryQueryPrepares(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	names, err := fs.Glob(store.QueryFiles, "queries/*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded queries: %v", err)
	}
	byHand, err := fs.Glob(store.QueryFiles, "queries/byhand/*.sql")
	if err != nil || len(byHand) == 0 {
		t.Fatalf("no embedded hand-run queries: %v", err)
	}
	names = append(names, byHand...)
	// The lead import merges from temp tables the stage and seen queries
	// create for the life of its transaction.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, name := range []string{"leads_import_stage", "leads_import_seen"} {
		if _, err := tx.Exec(ctx, store.Query(name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, p := range names {
		name := strings.TrimSuffix(path.Base(p), ".sql")
		if _, err := tx.Conn().Prepare(ctx, "", store.Query(name)); err != nil {
			t.Errorf("%s does not prepare against the schema: %v", name, err)
		}
	}
}
