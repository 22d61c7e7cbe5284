package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// Issue 30 (bench width): four email ticks at once failed with "deadlock
// detected" in the settle. Each settle adds its group's outcomes to the
// running totals of every mailbox in the group; the rows were locked in
// the order of a hash aggregate, so two ticks settling over the same
// mailboxes could each hold one the other wanted. Locked in mailbox order,
// every settle waits only for rows above those it holds: no cycle.
//
// Here a transaction holds the highest mailbox's totals row; a settle over
// all 20 mailboxes must by then hold the other 19 (locked in order, it
// stopped at the last), which NOWAIT shows for each.
func TestSettleLocksMailboxTotalsInMailboxOrder(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'order' FROM w RETURNING id, workspace_id),
		m AS (
			INSERT INTO mailboxes (workspace_id, address, smtp_url)
			SELECT w.id, 'sdr' || g || '@acme.test', 'smtp://127.0.0.1:1' FROM w, generate_series(1, 20) g
			RETURNING id, workspace_id
		),
		l AS (
			INSERT INTO leads (workspace_id, first_name, email)
			SELECT m.workspace_id, 'F', 'l' || m.id || '@x.test' FROM m RETURNING id, workspace_id, email
		),
		e AS (
			INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id, locked_by, locked_until)
			SELECT c.id, l.id, l.workspace_id, m.id, 'order-test', now() + interval '5 minutes'
			FROM c, l JOIN m ON l.email = 'l' || m.id || '@x.test'
			RETURNING id, mailbox_id
		),
		s AS (
			INSERT INTO sends (enrollment_id, step, mailbox_id, message_id)
			SELECT e.id, 1, e.mailbox_id, '<' || e.id || '@acme.test>' FROM e
		)
		INSERT INTO email_mailbox_totals (mailbox_id) SELECT id FROM m`); err != nil {
		t.Fatal(err)
	}
	var sends []store.SendResult
	var mailboxes []int64
	rows, err := db.Pool.Query(ctx, `SELECT enrollment_id, mailbox_id FROM sends ORDER BY mailbox_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var e, m int64
		if err := rows.Scan(&e, &m); err != nil {
			t.Fatal(err)
		}
		sends = append(sends, store.SendResult{EnrollmentID: e, Step: 1, Status: enrollment.SendSent, SentAt: time.Now(), Metric: store.MetricSent})
		mailboxes = append(mailboxes, m)
	}
	if rows.Err() != nil || len(sends) != 20 {
		t.Fatalf("%d sends seeded (%v), want 20", len(sends), rows.Err())
	}
	last := mailboxes[len(mailboxes)-1]

	holder, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, `SELECT 1 FROM email_mailbox_totals WHERE mailbox_id = $1 FOR UPDATE`, last); err != nil {
		t.Fatal(err)
	}
	patient, err := store.Open(ctx, store.Config{URL: db.URL, LockTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer patient.Close()
	settled := make(chan error, 1)
	go func() { settled <- store.Settle(ctx, patient, "order-test", store.Settlement{Sends: sends}) }()
	testkit.Eventually(t, "the settle to wait for the held mailbox", func() bool {
		select {
		case err := <-settled:
			t.Fatalf("the settle finished (%v) while a totals row it writes was held", err)
		default:
		}
		var n int
		_ = db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return n == 1
	})
	probe, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = probe.Rollback(ctx) }()
	for _, m := range mailboxes[:len(mailboxes)-1] {
		if _, err := probe.Exec(ctx, `SAVEPOINT p`); err != nil {
			t.Fatal(err)
		}
		_, err := probe.Exec(ctx, `SELECT 1 FROM email_mailbox_totals WHERE mailbox_id = $1 FOR UPDATE NOWAIT`, m)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			t.Errorf("mailbox %d's totals row is free while the settle waits for mailbox %d: it locks them out of order (err %v)", m, last, err)
		}
		if _, err := probe.Exec(ctx, `ROLLBACK TO SAVEPOINT p`); err != nil {
			t.Fatal(err)
		}
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-settled; err != nil {
		t.Fatal(err)
	}
}
