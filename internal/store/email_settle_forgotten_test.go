package store_test

import (
	"context"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 25: a person forgotten (lead forget) while a send to them was in
// flight bounces hard; the tick's settle suppresses the address. Only its
// hash may stay: the settle, like store.Suppress, must not write the
// address back beside the hash-only row.
func TestSettleNeverWritesAForgottenAddressBack(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	var ws int64
	if err := db.Pool.QueryRow(ctx, `INSERT INTO workspaces (name) VALUES ('acme') RETURNING id`).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	var hash []byte
	if err := db.Pool.QueryRow(ctx, `SELECT address_sha256('ada@analytical.example')`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Suppress(ctx, db.Pool, []store.Suppression{{WorkspaceID: ws, SHA256: hash, Reason: "forgotten"}}); err != nil {
		t.Fatal(err)
	}
	bounce := store.Settlement{Suppressions: []store.Suppression{
		{WorkspaceID: ws, Email: "Ada@Analytical.example", Reason: "hard_bounce"},
		{WorkspaceID: ws, Email: "bob@analytical.example", Reason: "hard_bounce"},
	}}
	if err := store.Settle(ctx, db.Pool, "forget-test", bounce); err != nil {
		t.Fatal(err)
	}
	var forgotten, kept int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE email_sha256 = $1 AND email IS NOT NULL),
		count(*) FILTER (WHERE email = 'bob@analytical.example') FROM suppressions`, hash).Scan(&forgotten, &kept); err != nil {
		t.Fatal(err)
	}
	if forgotten != 0 {
		t.Errorf("the settle wrote a forgotten address back into suppressions (%d rows)", forgotten)
	}
	if kept != 1 {
		t.Errorf("the settle suppressed %d rows for an address nobody forgot, want 1", kept)
	}
}
