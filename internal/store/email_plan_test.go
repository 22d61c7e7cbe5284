package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// The per-send statements run as cached prepared statements on tables a
// tick is filling: statistics taken before the tick see no locked
// enrollment, and campaign_recipients (written only by ticks) has none at
// all. Planned on that, the settle scanned every enrollment per group and
// the 'sending' record every recipient, so both grew with the campaign.
// Either plan Postgres may pick must reach those rows by key.
func TestEmailPerSendPlansReachRowsByKey(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	// The leads first, analyzed: enrollments' insert trigger looks each
	// lead up, and inserted in one statement with the leads it planned
	// that lookup on a table of a few rows and scanned the growing table
	// per enrollment (50 million rows; a statement timeout on a busy
	// machine).
	for _, q := range []string{`
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'plan' FROM w RETURNING id, workspace_id)
		INSERT INTO leads (workspace_id, external_id, first_name, email)
		SELECT w.id, 'p' || g, 'F', 'p' || g || '@x.example' FROM w, generate_series(1, 10000) g`,
		`ANALYZE leads`,
		`INSERT INTO enrollments (campaign_id, lead_id, workspace_id) SELECT c.id, l.id, l.workspace_id FROM campaigns c, leads l`,
		`ANALYZE leads, enrollments`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// A tick under way: a fifth of the campaign held, half of it mailed.
	if _, err := db.Pool.Exec(ctx, `
		UPDATE enrollments SET locked_by = 'plan-test', locked_until = now() + interval '5 minutes' WHERE id % 5 = 0;
		INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
		SELECT e.campaign_id, l.email, e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id WHERE e.id % 2 = 0`); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprint((i + 1) * 5)
	}
	arr := func(v string) string { return "'{" + strings.TrimSuffix(strings.Repeat(v+",", 100), ",") + "}'" }
	idArr := "'{" + strings.Join(ids, ",") + "}'"
	var campaign int64
	if err := db.Pool.QueryRow(ctx, `SELECT id FROM campaigns`).Scan(&campaign); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query, sql string
		args       map[string]string
		table      string
	}{
		{"email_settle", store.EmailSettleSQL, map[string]string{"tick_id": "'plan-test'",
			"send_enrollment_ids": idArr, "send_steps": arr("1"), "send_statuses": arr("sent"), "send_sent_at": arr("2026-12-03 10:00+00"),
			"send_errors": arr(`""`), "send_metrics": arr("sent"), "send_bounced": arr("false"),
			"enrollment_ids": idArr, "enrollment_statuses": arr("completed"), "enrollment_steps": arr("2"),
			"enrollment_next_send_at": arr("2026-12-03 10:00+00"), "enrollment_mailbox_ids": arr("0"), "enrollment_attempts": arr("1"),
			"enrollment_errors": arr(`""`), "suppression_workspaces": "'{}'", "suppression_emails": "'{}'", "suppression_reasons": "'{}'"}, "enrollments"},
		{"email_sends_begin", store.EmailSendsBeginSQL, map[string]string{"enrollment_ids": idArr, "steps": arr("1"), "mailbox_ids": arr("1"),
			"message_ids": "'{" + strings.Join(ids, "x,") + "x}'", "campaign_ids": arr(fmt.Sprint(campaign)), "emails": arr("p1@x.example"),
			"holders": arr("0")}, "campaign_recipients"},
	}
	for _, c := range cases {
		tx, err := db.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		sql, args := prepared(t, c.sql, c.args)
		if _, err := tx.Exec(ctx, `PREPARE plan_`+c.query+` AS `+sql); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = `+mode); err != nil {
				t.Fatal(err)
			}
			rows, err := tx.Query(ctx, `EXPLAIN (COSTS OFF) EXECUTE plan_`+c.query+`(`+args+`)`)
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			plan := strings.Join(lines, "\n")
			if strings.Contains(plan, "Seq Scan on "+c.table) {
				t.Errorf("%s (%s) scans all of %s:\n%s", c.query, mode, c.table, plan)
			}
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A tick keeps the 'sending' statement prepared for its whole run, so its
// plan is made on the statistics of the moment. Analyzed while the
// campaign's recipients were few (a young campaign, or autovacuum early in
// the day), campaign_recipients looks like one page, and a per-row holder
// lookup in that plan is a scan of the whole table: a tick sending N
// messages then read about N²/2 rows (30,339 overdue steps: ~460 million).
// The statement now looks up no holder per row (the claim, planned per run,
// does). The settle, cached the same way, scanned all of sends once per
// group it settled; it now runs with sequential scans off. This counts the
// rows sequential scans read while a tick's worth of rounds, then of
// settled groups, go through one connection under the cached generic plans.
func TestSendingRoundsNeverScanRecipientsPerRow(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	const leads, round = 1500, 15
	var campaign, mailbox int64
	if err := db.Pool.QueryRow(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'young' FROM w RETURNING id, workspace_id),
		m AS (INSERT INTO mailboxes (workspace_id, address, smtp_url) SELECT id, 'sdr@acme.example', 'smtp://127.0.0.1:25' FROM w RETURNING id),
		l AS (
			INSERT INTO leads (workspace_id, external_id, first_name, email)
			SELECT w.id, 'r' || g, 'F', 'r' || g || '@x.example' FROM w, generate_series(1, $1::int) g
			RETURNING id, workspace_id
		),
		e AS (INSERT INTO enrollments (campaign_id, lead_id, workspace_id) SELECT c.id, l.id, l.workspace_id FROM c, l)
		SELECT c.id, m.id FROM c, m`, leads).Scan(&campaign, &mailbox); err != nil {
		t.Fatal(err)
	}
	// Statistics taken while the campaign had mailed ten addresses.
	if _, err := db.Pool.Exec(ctx, `
		INSERT INTO campaign_recipients (campaign_id, email, enrollment_id)
		SELECT e.campaign_id, l.email, e.id FROM enrollments e JOIN leads l ON l.id = e.lead_id ORDER BY e.id LIMIT 10;
		ANALYZE campaign_recipients, sends, enrollments, leads`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Pool.Query(ctx, `SELECT e.id, l.email FROM enrollments e JOIN leads l ON l.id = e.lead_id ORDER BY e.id OFFSET 10`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID    int64
		Email string
	}
	todo, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The plan a long tick runs on once Postgres settles on a generic one.
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	written := 0
	var recorded []int64
	for len(todo) > 0 {
		n := min(round, len(todo))
		starts := make([]store.SendStart, n)
		for i, r := range todo[:n] {
			starts[i] = store.SendStart{EnrollmentID: r.ID, Step: 1, MailboxID: mailbox,
				MessageID: fmt.Sprintf("<%d@acme.example>", r.ID), CampaignID: campaign, Email: r.Email}
		}
		todo = todo[n:]
		begun, err := store.BeginSends(ctx, conn, starts)
		if err != nil {
			t.Fatal(err)
		}
		for id, b := range begun {
			if b.Written {
				written++
				recorded = append(recorded, id)
			}
		}
	}
	if written != leads-10 {
		t.Fatalf("written = %d, want %d", written, leads-10)
	}
	for i := 0; i < len(recorded); i += round {
		group := recorded[i:min(i+round, len(recorded))]
		results := make([]store.SendResult, len(group))
		for j, id := range group {
			results[j] = store.SendResult{EnrollmentID: id, Step: 1, Status: enrollment.SendSent, SentAt: time.Now(), Metric: store.MetricSent}
		}
		if err := store.Settle(ctx, conn, "plan-test", store.Settlement{Sends: results}); err != nil {
			t.Fatal(err)
		}
	}
	var sent int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE status = 'sent'`).Scan(&sent); err != nil || sent != written {
		t.Fatalf("%d sends settled as sent (%v), want %d", sent, err, written)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	conn.Release()
	// Linear at worst (one look at each row); a scan per row read 2.2
	// million rows of campaign_recipients, one per settled group 149,000
	// of sends.
	for _, table := range []string{"campaign_recipients", "sends"} {
		var seqRead int
		if err := db.Pool.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE relname = $1`, table).Scan(&seqRead); err != nil {
			t.Fatal(err)
		}
		if seqRead > leads {
			t.Errorf("sequential scans read %d %s rows while recording and settling %d sends in groups of %d; want at most %d (no scan per row or group)",
				seqRead, table, written, round, leads)
		}
	}
}

// Who may mail an address, decided by the 'sending' statement from the
// holder the claim saw and what it inserts itself.
func TestBeginSendsHoldsEachAddressForOneEnrollment(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	var campaign, mailbox int64
	if err := db.Pool.QueryRow(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'holders' FROM w RETURNING id),
		m AS (INSERT INTO mailboxes (workspace_id, address, smtp_url) SELECT id, 'sdr@acme.example', 'smtp://127.0.0.1:25' FROM w RETURNING id),
		l AS (
			INSERT INTO leads (workspace_id, external_id, first_name, email)
			SELECT w.id, 'h' || g, 'F', 'h' || g || '@x.example' FROM w, generate_series(1, 8) g
			RETURNING id, workspace_id
		),
		e AS (INSERT INTO enrollments (campaign_id, lead_id, workspace_id) SELECT c.id, l.id, l.workspace_id FROM c, l ORDER BY l.id)
		SELECT c.id, m.id FROM c, m`).Scan(&campaign, &mailbox); err != nil {
		t.Fatal(err)
	}
	var first int64
	if err := db.Pool.QueryRow(ctx, `SELECT min(id) FROM enrollments`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	e := func(i int64) int64 { return first + i - 1 }
	// Enrollment 1 holds a@ (mailed before); enrollment 2 will claim c@
	// after enrollment 3's claim read "no holder" (another tick, in between).
	if _, err := db.Pool.Exec(ctx, `INSERT INTO campaign_recipients (campaign_id, email, enrollment_id) VALUES ($1, 'a@x.example', $2), ($1, 'c@x.example', $3)`,
		campaign, e(1), e(2)); err != nil {
		t.Fatal(err)
	}
	start := func(i int64, step int, email string, holder int64) store.SendStart {
		return store.SendStart{EnrollmentID: e(i), Step: step, MailboxID: mailbox, MessageID: fmt.Sprintf("<%d.%d@acme.example>", i, step),
			CampaignID: campaign, Email: email, Holder: holder}
	}
	starts := []store.SendStart{
		start(1, 1, "a@x.example", e(1)), // its own address (a retry): written
		start(4, 1, "a@x.example", e(1)), // the claim saw enrollment 1 holding it: duplicate
		start(3, 1, "c@x.example", 0),    // claimed by enrollment 2 since the claim: duplicate
		start(5, 1, "d@x.example", 0),    // new address: held and written
		start(6, 1, "e@x.example", 0),    // two leads, one address, one round:
		start(7, 1, "e@x.example", 0),    // exactly one of them is written
		start(8, 2, "f@x.example", 0),    // a follow-up without a holder: written
	}
	begun, err := store.BeginSends(ctx, db.Pool, starts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]store.SendBegun{
		e(1): {Written: true}, e(4): {Duplicate: e(1)}, e(3): {Duplicate: e(2)}, e(5): {Written: true}, e(8): {Written: true},
	}
	for id, w := range want {
		if got := begun[id]; got != w {
			t.Errorf("enrollment %d: got %+v, want %+v", id-first+1, got, w)
		}
	}
	six, seven := begun[e(6)], begun[e(7)]
	if six.Written == seven.Written || (six.Written && seven.Duplicate != e(6)) || (seven.Written && six.Duplicate != e(7)) {
		t.Errorf("one address twice in a round: got %+v and %+v, want one written and the other its duplicate", six, seven)
	}
	var holders int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM campaign_recipients WHERE email IN ('d@x.example', 'e@x.example')`).Scan(&holders); err != nil {
		t.Fatal(err)
	}
	if holders != 2 {
		t.Errorf("campaign_recipients holds %d of d@ and e@, want 2", holders)
	}
}
