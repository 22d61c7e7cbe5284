package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// Issue 30, item 2: at 16 email processes over 1,000 mailboxes each
// process opened its own connection to nearly every mailbox (1.4 messages
// per connection), because every claim took the oldest due rows whatever
// their mailbox. With other email ticks claiming, a claim now serves its
// share of the mailboxes first (store.ShareMask), and the rest
// only when its share cannot fill the batch; ticks that died or finished
// do not count.
func TestEmailClaimServesItsShareOfMailboxesFirst(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	seedShareBacklog(t, db)
	start := func(id string) { startEmailTick(t, db, id) }
	// Two ticks claiming; beside them one killed (its claims_until passed,
	// never finished) and one finished: neither has a share.
	for _, id := range []string{"share-0", "share-1", "tick-a", "tick-b"} {
		start(id)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE tick_runs SET claims_until = now() - interval '1 second' WHERE tick_id = 'share-0';
		UPDATE tick_runs SET finished_at = now(), exit_status = 0 WHERE tick_id = 'share-1'`); err != nil {
		t.Fatal(err)
	}
	claim := func(tickID string, batch int) []store.ClaimedEnrollment {
		t.Helper()
		c, err := store.ClaimEnrollments(ctx, db.Pool, store.EmailClaimRequest{Batch: batch, Lease: time.Hour, TickID: tickID})
		if err != nil {
			t.Fatal(err)
		}
		return c.Rows
	}
	sides := shareSides(t, db)

	if a, b := sides.split(claim("tick-a", 40)); a != 40 || b != 0 {
		t.Errorf("tick-a claimed %d rows on its mailboxes and %d on tick-b's, want its share only: 40 and 0", a, b)
	}
	if a, b := sides.split(claim("tick-b", 40)); a != 0 || b != 40 {
		t.Errorf("tick-b claimed %d rows on tick-a's mailboxes and %d on its own, want its share only: 0 and 40", a, b)
	}
	// A batch of 200 takes what is left of tick-a's, then the other
	// share's rather than leave them waiting.
	wantA, wantB := 20*sides.a-40, 20*sides.b-40
	if a, b := sides.split(claim("tick-a", 200)); a != wantA || b != wantB {
		t.Errorf("tick-a with its share short claimed %d rows on its mailboxes and %d on tick-b's, want %d and %d (the rest served too)", a, b, wantA, wantB)
	}
}

// sides are the 8 mailboxes of seedShareBacklog split between the shares
// of ticks tick-a and tick-b, claiming beside each other.
type sides struct {
	ofA  map[int64]bool
	a, b int // mailboxes in each share
}

// shareSides splits db's mailboxes between tick-a and tick-b. Each
// must hold at least two (the tests claim 40 rows, 20 per mailbox, from
// each share): fatal otherwise, since the split is fixed by the tick ids
// and the hash.
func shareSides(t *testing.T, db *storetest.DB) sides {
	t.Helper()
	ids := storetest.Column[int64](t, db.Pool, `SELECT id FROM mailboxes`)
	mask := store.ShareMask("tick-a", []string{"tick-b"})
	s := sides{ofA: map[int64]bool{}}
	for _, id := range ids {
		if store.InShare(mask, id) {
			s.ofA[id] = true
			s.a++
		} else {
			s.b++
		}
	}
	if s.a < 2 || s.b < 2 {
		t.Fatalf("tick-a holds %d of the mailboxes and tick-b %d; the tests need two or more each", s.a, s.b)
	}
	return s
}

// split counts rows on tick-a's mailboxes and on tick-b's.
func (s sides) split(rows []store.ClaimedEnrollment) (a, b int) {
	for _, r := range rows {
		if s.ofA[r.MailboxID] {
			a++
		} else {
			b++
		}
	}
	return a, b
}

// cappedShares is seedShareBacklog with a daily cap on every mailbox (so
// claims lock the mailboxes they count) and ticks tick-a and tick-b
// claiming.
func cappedShares(t *testing.T) *storetest.DB {
	t.Helper()
	db := storetest.New(t)
	seedShareBacklog(t, db)
	if _, err := db.Pool.Exec(context.Background(), `UPDATE mailboxes SET daily_cap = 50`); err != nil {
		t.Fatal(err)
	}
	startEmailTick(t, db, "tick-a")
	startEmailTick(t, db, "tick-b")
	return db
}

// seedShareBacklog loads 8 mailboxes of one campaign with 20 due rows each,
// due order cycling through them, so the oldest rows of any batch are on
// every mailbox.
func seedShareBacklog(t *testing.T, db *storetest.DB) {
	t.Helper()
	seedClaimBacklog(t, db, 8, 160,
		`INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id, next_send_at)
		 SELECT c.id, l.id, l.workspace_id, (SELECT min(id) FROM mailboxes) + l.id % 8, now() - interval '1 hour' + l.id * interval '1 second'
		 FROM campaigns c, leads l`)
}

// seedClaimBacklog loads a workspace with one campaign over mailboxes
// mailboxes and leads leads with an address, then runs enroll, the
// statement enrolling them.
func seedClaimBacklog(t *testing.T, db *storetest.DB, mailboxes, leads int, enroll string) {
	t.Helper()
	for _, st := range []struct {
		q   string
		arg []any
	}{{`
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		-- in_a_row off: these claims serve the other share's mailboxes while
		-- its tick holds rows on them, which the bounce limit charged at the
		-- claim (rows other ticks have in flight) would not.
		c AS (INSERT INTO campaigns (workspace_id, name, bounce_streak_max) SELECT id, 'q4', 0 FROM w RETURNING id),
		m AS (INSERT INTO mailboxes (workspace_id, address, smtp_url)
		      SELECT w.id, 'sdr' || g || '@acme.test', 'smtp://127.0.0.1:1' FROM w, generate_series(1, $1::int) g RETURNING id)
		INSERT INTO campaign_mailboxes (campaign_id, mailbox_id) SELECT c.id, m.id FROM c, m`, []any{mailboxes}},
		{`INSERT INTO leads (workspace_id, external_id, first_name, company_domain, email)
		 SELECT w.id, 'p' || g, 'F', 'x.example', 'p' || g || '@x.example' FROM workspaces w, generate_series(1, $1::int) g`, []any{leads}},
		{`ANALYZE leads`, nil}, {enroll, nil},
	} {
		if _, err := db.Pool.Exec(context.Background(), st.q, st.arg...); err != nil {
			t.Fatal(err)
		}
	}
}

// startEmailTick records an email tick's start, so claims count it.
func startEmailTick(t *testing.T, db *storetest.DB, id string) {
	t.Helper()
	if _, err := store.TickRunStart(context.Background(), db.Pool, store.TickRun{Kind: tickkind.Email, TickID: id, Host: "host", PID: 1}, time.Hour); err != nil {
		t.Fatal(err)
	}
}

// With a daily cap, a claim locks the mailboxes whose room it counts. It
// locked every capped mailbox, so at 8 processes over 1,000 mailboxes at
// 50 a day each claim found the others' claims holding nearly all of
// them (SKIP LOCKED), claimed little, retried and gave up: 34 ticks ran in
// 10 s where 8 should, at 75% of the uncapped rate (issue 30). A claim
// whose share can fill its batch locks only its share, so two ticks claim
// at once, each from its own mailboxes.
func TestEmailClaimLocksOnlyItsShareOfCappedMailboxes(t *testing.T) {
	t.Parallel()
	db := cappedShares(t)
	ctx := context.Background()

	// tick-a claims and has not committed: it holds the locks it took.
	txA, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback(ctx)
	a, err := store.ClaimEnrollments(ctx, txA, store.EmailClaimRequest{Batch: 40, Lease: time.Hour, TickID: "tick-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Rows) != 40 {
		t.Fatalf("tick-a claimed %d rows, want 40", len(a.Rows))
	}
	b, err := store.ClaimEnrollments(ctx, db.Pool, store.EmailClaimRequest{Batch: 40, Lease: time.Hour, TickID: "tick-b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, own := shareSides(t, db).split(b.Rows); len(b.Rows) != 40 || own != 40 || b.Contended {
		t.Errorf("tick-b, claiming while tick-a holds its claim, got %d rows (%d on its own mailboxes), contended %v; want 40 on its own, not contended",
			len(b.Rows), own, b.Contended)
	}
}

// A claim serving the rest locks the others' shares. At 16 processes over
// 1,000 capped mailboxes, a claim that found some of its own share held by
// such a claim went on to the rest, where it held the others' shares in
// turn: a cascade in which a third of the rows claimed were on another
// tick's mailboxes, 4–5 messages per SMTP connection instead of 12
// (issue 30). A claim whose share is partly held now takes what it can of
// its share and says it was contended (the tick claims again shortly);
// only a share that is short with none of it held reaches the rest.
func TestEmailClaimLeavesTheRestWhileItsShareIsHeld(t *testing.T) {
	t.Parallel()
	db := cappedShares(t)
	ctx := context.Background()

	sides := shareSides(t, db)
	var held int64
	for id := range sides.ofA {
		held = max(held, id)
	}
	// Another claim (tick-b's, serving the rest) holds one of tick-a's
	// mailboxes.
	hold, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback(ctx)
	if _, err := hold.Exec(ctx, `SELECT id FROM mailboxes WHERE id = $1 FOR NO KEY UPDATE`, held); err != nil {
		t.Fatal(err)
	}
	a, err := store.ClaimEnrollments(ctx, db.Pool, store.EmailClaimRequest{Batch: 200, Lease: time.Hour, TickID: "tick-a"})
	if err != nil {
		t.Fatal(err)
	}
	want := 20 * (sides.a - 1)
	if own, rest := sides.split(a.Rows); own != want || rest != 0 || !a.Contended {
		t.Errorf("tick-a, one of its %d mailboxes held, claimed %d rows on its mailboxes and %d on tick-b's, contended %v; want %d, 0, contended",
			sides.a, own, rest, a.Contended, want)
	}

	// Nothing of its share held, and the share short: the rest is served.
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	a, err = store.ClaimEnrollments(ctx, db.Pool, store.EmailClaimRequest{Batch: 200, Lease: time.Hour, TickID: "tick-a"})
	if err != nil {
		t.Fatal(err)
	}
	if own, rest := sides.split(a.Rows); own != 20 || rest != 20*sides.b || a.Contended {
		t.Errorf("tick-a, its share short, claimed %d rows on its mailboxes and %d on tick-b's, contended %v; want 20, %d (the rest served), not contended",
			own, rest, a.Contended, 20*sides.b)
	}
}
