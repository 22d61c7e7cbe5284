package store_test

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// A 'sending' row is committed durably before its message goes out, even
// on a server whose default is synchronous_commit=off: lost in a crash, the
// step would be sent again. The invariant harness found that duplicate
// after a Postgres crash on such a server.
func TestBeginSendsCommitsDurably(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.New(t)
	if _, err := db.Pool.Exec(ctx, `SET synchronous_commit = off`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.BeginSends(ctx, tx, nil); err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := tx.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Errorf("synchronous_commit = %s while recording 'sending', want on", setting)
	}
}
