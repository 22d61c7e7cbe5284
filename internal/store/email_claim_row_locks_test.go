package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
	"github.com/rindactl/rindactl/internal/testkit"
)

// A claim's row locks leave the foreign keys to enrollments free. A claim
// whose snapshot predates another tick's claim re-checks the rows that
// tick has just taken, and Postgres keeps the lock it took for the
// re-check until the claim commits, though it does not claim the row.
// Taken FOR UPDATE, that lock held up the other tick's 'sending' write,
// whose foreign key check takes KEY SHARE on the enrollment: at 16 email
// processes the write waited behind other ticks' claims in 10 of the 19
// transactionid samples (issue 30). FOR NO KEY UPDATE keeps claims apart
// the same way and lets the check through. Here the claim holds the row it
// took, the strongest lock a claim takes on a row.
func TestEmailClaimRowLocksLeaveSendingWritesFree(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	seedShareBacklog(t, db)
	ctx := context.Background()

	claim, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Rollback(ctx)
	held, err := store.ClaimEnrollments(ctx, claim, store.EmailClaimRequest{Batch: 1, Lease: time.Hour, TickID: "tick-b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Rows) != 1 {
		t.Fatalf("claimed %d rows, want 1", len(held.Rows))
	}
	r := held.Rows[0]
	type begun struct {
		sends map[int64]store.SendBegun
		err   error
	}
	done := make(chan begun, 1)
	go func() {
		sends, err := store.BeginSends(ctx, db.Pool, []store.SendStart{{EnrollmentID: r.ID, Step: r.Step, MailboxID: r.MailboxID,
			MessageID: "<row-locks@acme.test>", CampaignID: r.CampaignID, Email: r.Email, Holder: r.Holder}})
		done <- begun{sends, err}
	}()
	testkit.Eventually(t, "the 'sending' write to finish", func() bool {
		select {
		case b := <-done:
			if b.err != nil {
				t.Fatal(b.err)
			}
			if !b.sends[r.ID].Written {
				t.Fatalf("the 'sending' write did not write the claimed step: %+v", b.sends)
			}
			return true
		default:
		}
		if lockWaits(t, db) > 0 {
			t.Fatal("the 'sending' write waits on the claim's row lock")
		}
		return false
	})
}

// lockWaits counts the client sessions of db's database waiting on a lock.
func lockWaits(t *testing.T, db *storetest.DB) int {
	t.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
