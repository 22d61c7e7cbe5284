package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 25: rows stored before canonical spellings (two spellings of one
// person) are rewritten by the migration's work, merging what becomes one
// key: the older suppression stays, the address stays with the enrollment
// that mailed it first, addresses without a canonical spelling are kept.
func TestRewriteAddressesMergesSpellings(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`INSERT INTO workspaces (name) VALUES ('acme')`)
	exec(`INSERT INTO leads (workspace_id, external_id, email)
		SELECT w.id, x.ext, x.email FROM workspaces w,
		(VALUES ('a', 'jorg@bücher.example'), ('b', 'jorg@xn--bcher-kva.example'), ('c', 'zoe' || U&'\0308' || '@example.com'),
		        ('d', ' Zo' || U&'\00EB' || '@EXAMPLE.com '), ('e', U&'\202E' || 'eve@example.com'), ('f', 'plain@example.com')) AS x (ext, email)`)
	exec(`INSERT INTO suppressions (workspace_id, email, reason, created_at)
		SELECT w.id, x.email, x.reason, now() - x.age FROM workspaces w,
		(VALUES ('jorg@xn--bcher-kva.example', 'bounced', interval '1 hour'), ('jorg@bücher.example', 'unsubscribed', interval '2 hours'),
		        ('zoe' || U&'\0308' || '@example.com', 'bounced', interval '1 hour'), ('ZOE' || U&'\0308' || '@example.com', 'bounced', interval '3 hours'),
		        ('Solo@Example.com', 'bounced', interval '1 hour')) AS x (email, reason, age)`)
	// Campaign 7: enrollment 2 mailed jörg first (as bücher), enrollment 1
	// later (as xn--); enrollment 3 holds zoë (NFD) without a send.
	exec(`INSERT INTO campaign_recipients (campaign_id, email, enrollment_id) VALUES
		(7, 'jorg@xn--bcher-kva.example', 1), (7, 'jorg@bücher.example', 2), (7, 'zoe' || U&'\0308' || '@example.com', 3),
		(8, 'jorg@bücher.example', 4)`)
	exec(`INSERT INTO campaigns (id, workspace_id, name) OVERRIDING SYSTEM VALUE
		SELECT x.id, w.id, x.name FROM workspaces w, (VALUES (7, 'q7'), (8, 'q8')) AS x (id, name)`)
	exec(`INSERT INTO enrollments (id, campaign_id, lead_id, workspace_id) OVERRIDING SYSTEM VALUE
		SELECT x.id, x.campaign, l.id, l.workspace_id FROM leads l JOIN (VALUES (1, 7, 'b'), (2, 7, 'a'), (3, 7, 'c'), (4, 8, 'a')) AS x (id, campaign, ext) ON x.ext = l.external_id`)
	exec(`INSERT INTO sends (enrollment_id, step, status, message_id, created_at) VALUES
		(1, 1, 'sent', 'm1@x', now() - interval '1 hour'), (2, 1, 'sent', 'm2@x', now() - interval '2 hours')`)

	if err := store.RewriteAddresses(ctx, db.Pool); err != nil {
		t.Fatal(err)
	}
	rows := func(sql string) string {
		t.Helper()
		r, err := db.Pool.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for r.Next() {
			var s string
			if err := r.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return strings.Join(out, "; ")
	}
	if got, want := rows(`SELECT external_id || '=' || email FROM leads ORDER BY external_id`),
		"a=jorg@xn--bcher-kva.example; b=jorg@xn--bcher-kva.example; c=zoë@example.com; d=zoë@example.com; e=\u202eeve@example.com; f=plain@example.com"; got != want {
		t.Errorf("leads:\n got %s\nwant %s", got, want)
	}
	if got, want := rows(`SELECT email || '=' || reason FROM suppressions ORDER BY email`),
		"jorg@xn--bcher-kva.example=unsubscribed; solo@example.com=bounced; zoë@example.com=bounced"; got != want {
		t.Errorf("suppressions:\n got %s\nwant %s", got, want)
	}
	if got, want := rows(`SELECT campaign_id || ':' || email || '=' || enrollment_id FROM campaign_recipients ORDER BY campaign_id, email`),
		"7:jorg@xn--bcher-kva.example=2; 7:zoë@example.com=3; 8:jorg@xn--bcher-kva.example=4"; got != want {
		t.Errorf("campaign_recipients:\n got %s\nwant %s", got, want)
	}
	// Idempotent: a second run changes nothing.
	if err := store.RewriteAddresses(ctx, db.Pool); err != nil {
		t.Fatal(err)
	}
	if got := rows(`SELECT count(*)::text FROM suppressions`); got != "3" {
		t.Errorf("%s suppressions after a second run, want 3", got)
	}
}
