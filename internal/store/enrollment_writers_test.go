package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/rindactl/rindactl/internal/enrollment"
	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 28: every SQL statement that writes an enrollment's status (the
// rows of docs/architecture.md's "Where state changes" outside bench and
// demo), run through its store function on a real database against one
// row in each status, as its callers call it: every move it makes must be
// in enrollment's transition table, and the moves it exists for must
// happen.
func TestEnrollmentWritersFollowTheTable(t *testing.T) {
	t.Parallel()
	const tick = "writers-test"
	ctx := context.Background()
	type rows map[enrollment.Status]int64 // status it started in → enrollment id
	writers := []struct {
		name string
		run  func(t *testing.T, db *pgxpool.Pool, r rows)
		// moves are the moves the writer must make (from → to); any other
		// row must keep its status.
		moves map[enrollment.Status]enrollment.Status
	}{
		{name: "email_claim (store.ClaimEnrollments)", run: func(t *testing.T, db *pgxpool.Pool, r rows) {
			if _, err := store.ClaimEnrollments(ctx, db, store.EmailClaimRequest{Batch: 100, Lease: time.Minute, TickID: tick}); err != nil {
				t.Fatal(err)
			}
		}, moves: map[enrollment.Status]enrollment.Status{enrollment.Active: enrollment.Active}},
		{name: "email_enroll_insert (store.InsertEnrollments)", run: func(t *testing.T, db *pgxpool.Pool, r rows) {
			// Every lead enrolled again: an enrolled one keeps its row.
			err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
				var campaign, workspace int64
				if err := tx.QueryRow(ctx, `SELECT id, workspace_id FROM campaigns`).Scan(&campaign, &workspace); err != nil {
					return err
				}
				var es []store.NewEnrollment
				lrows, err := tx.Query(ctx, `SELECT lead_id FROM enrollments`)
				if err != nil {
					return err
				}
				leads, err := pgx.CollectRows(lrows, pgx.RowTo[int64])
				if err != nil {
					return err
				}
				for _, l := range leads {
					es = append(es, store.NewEnrollment{LeadID: l, NextSendAt: time.Now()})
				}
				n, err := store.InsertEnrollments(ctx, tx, campaign, workspace, es)
				if err == nil && n != 0 {
					t.Errorf("enrolling enrolled leads inserted %d rows", n)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "email_settle (store.Settle)", run: func(t *testing.T, db *pgxpool.Pool, r rows) {
			// The tick holds every row (as if it had claimed it) and asks
			// each to end differently.
			if _, err := db.Exec(ctx, `UPDATE enrollments SET locked_by = $1, locked_until = now() + interval '1 minute'`, tick); err != nil {
				t.Fatal(err)
			}
			var set store.Settlement
			for from, id := range r {
				set.Enrollments = append(set.Enrollments, store.EnrollmentUpdate{ID: id, Status: settleTo(from), CurrentStep: 2, NextSendAt: time.Now()})
			}
			if err := store.Settle(ctx, db, tick, set); err != nil {
				t.Fatal(err)
			}
		}, moves: map[enrollment.Status]enrollment.Status{enrollment.Active: settleTo(enrollment.Active)}},
		{name: "ops_enrollment_mark (store.MarkEnrollments)", run: func(t *testing.T, db *pgxpool.Pool, r rows) {
			var ids []int64
			for _, id := range r {
				ids = append(ids, id)
			}
			if _, err := store.MarkEnrollments(ctx, db, ids, enrollment.Replied, ""); err != nil {
				t.Fatal(err)
			}
		}, moves: map[enrollment.Status]enrollment.Status{enrollment.Active: enrollment.Replied}},
		{name: "ops_requeue_enrollments_batch (store.OpsRequeueEnrollmentsBatch)", run: func(t *testing.T, db *pgxpool.Pool, r rows) {
			// As requeue.Run calls it: for the requeueable statuses only.
			for _, s := range enrollment.Requeueable {
				if _, err := store.OpsRequeueEnrollmentsBatch(ctx, db, s, store.OpsRequeueFilter{}, 100); err != nil {
					t.Fatal(err)
				}
			}
		}, moves: map[enrollment.Status]enrollment.Status{enrollment.Failed: enrollment.Active, enrollment.DeliveryUnknown: enrollment.Active}},
		{name: "unsubscribe_apply (store.ApplyUnsubscribe)", run: func(t *testing.T, db *pgxpool.Pool, r rows) {
			// One token per row: each ends its own enrollment (the
			// leads' addresses differ).
			for _, id := range r {
				var ws int64
				if err := db.QueryRow(ctx, `SELECT workspace_id FROM enrollments WHERE id = $1`, id).Scan(&ws); err != nil {
					t.Fatal(err)
				}
				if _, err := store.ApplyUnsubscribe(ctx, db, id, store.UnsubscribeTarget{WorkspaceID: ws}, "apply"); err != nil {
					t.Fatal(err)
				}
			}
		}, moves: map[enrollment.Status]enrollment.Status{enrollment.Active: enrollment.Unsubscribed}},
	}
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			db := storetest.New(t)
			r := rows{}
			for _, s := range enrollment.Statuses {
				r[s] = enrollmentIn(t, db.Pool, s)
			}
			w.run(t, db.Pool, r)
			for from, id := range r {
				var got enrollment.Status
				if err := db.Pool.QueryRow(ctx, `SELECT status FROM enrollments WHERE id = $1`, id).Scan(&got); err != nil {
					t.Fatal(err)
				}
				want, moves := w.moves[from]
				if !moves {
					want = from
				}
				if got != from && !from.CanBecome(got) {
					t.Errorf("%s -> %s: a move the transition table refuses", from, got)
				}
				if got != want {
					t.Errorf("from %s: status %s, want %s", from, got, want)
				}
				if moves && !from.CanBecome(want) {
					t.Errorf("the test wants %s -> %s, which the table refuses", from, want)
				}
			}
		})
	}
}

// settleTo is the outcome the settle test asks for a row in status from:
// a different one per status, none of them from itself.
func settleTo(from enrollment.Status) enrollment.Status {
	if from == enrollment.Active {
		return enrollment.Completed
	}
	return enrollment.Active
}

// enrollmentIn adds a lead (its own address) and its due enrollment in
// status s, on one workspace, campaign and mailbox, and returns its id.
func enrollmentIn(t *testing.T, db *pgxpool.Pool, s enrollment.Status) int64 {
	t.Helper()
	var id int64
	err := db.QueryRow(context.Background(), `
		WITH w AS (INSERT INTO workspaces (name) VALUES ('acme') ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id),
		c AS (INSERT INTO campaigns (workspace_id, name) SELECT id, 'writers' FROM w
		      ON CONFLICT (workspace_id, name) DO UPDATE SET name = EXCLUDED.name RETURNING id, workspace_id),
		m AS (INSERT INTO mailboxes (workspace_id, address, smtp_url) SELECT id, 'sdr@acme.test', 'smtp://127.0.0.1:1' FROM w
		      ON CONFLICT (workspace_id, address) DO UPDATE SET address = EXCLUDED.address RETURNING id),
		cm AS (INSERT INTO campaign_mailboxes (campaign_id, mailbox_id) SELECT c.id, m.id FROM c, m ON CONFLICT DO NOTHING),
		l AS (INSERT INTO leads (workspace_id, first_name, email) SELECT id, 'F', $1 || '@lead.test' FROM w RETURNING id, workspace_id)
		INSERT INTO enrollments (campaign_id, lead_id, workspace_id, status, mailbox_id, next_send_at)
		SELECT c.id, l.id, l.workspace_id, $1, m.id, now() - interval '1 minute' FROM c, l, m
		RETURNING id`, string(s)).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
