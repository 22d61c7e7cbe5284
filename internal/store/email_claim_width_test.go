package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/store"
	"github.com/rindactl/rindactl/internal/store/storetest"
)

// Issue 30, item 2: email fell from 1,716 sends/s at 8 processes to 347/s
// at 16. Each claim read every due row of the mailboxes it could serve
// (and every lead) to sort them and keep a batch: the served mailboxes were
// a CTE the planner could not see into, so it guessed few of them and
// chose the mailbox index over the claim index. A claim's cost grew with
// the backlog, and every process's claims paid it. The served mailboxes
// are now a parameter of the claim, planned per run: with all of them
// open, a claim walks the claim index in due order and reads about a row
// per row it claims; with only a few open, it reads only theirs, however
// many older rows wait on the others (paused or full). Bound by rows read,
// never by time.
func TestEmailClaimReadsItsBatchNotTheBacklog(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	ctx := context.Background()
	const mailboxes, leads, batch = 1000, 40000, 500
	// All due an hour ago, as bench width loads them.
	seedDueBacklog(t, db, mailboxes, leads, `now() - interval '1 hour'`)
	claimReads := func(what string) ([]store.ClaimedEnrollment, int) {
		t.Helper()
		return claimCountingReads(t, db, batch, "width-"+what)
	}

	// Every mailbox open: the oldest 500 of 40,000 due rows (on 1,000
	// mailboxes, as in bench width; the old claim chose the mailbox index
	// for so many mailboxes).
	rows, read := claimReads("all-open")
	if len(rows) != batch {
		t.Fatalf("claimed %d, want %d", len(rows), batch)
	}
	if read > 10*batch {
		t.Errorf("with every mailbox open a claim of %d read %d enrollment and lead rows, want at most %d (the backlog is %d: a claim must not read it)", batch, read, 10*batch, leads)
	}

	// All but the first mailbox paused, their rows due two days ago: those
	// 39,960 older rows must not be walked to reach the first one's.
	if _, err := db.Pool.Exec(ctx, `
		UPDATE mailboxes SET paused_until = now() + interval '1 hour' WHERE id <> (SELECT min(id) FROM mailboxes);
		UPDATE enrollments SET next_send_at = now() - interval '2 days' WHERE mailbox_id <> (SELECT min(id) FROM mailboxes) AND locked_until IS NULL`); err != nil {
		t.Fatal(err)
	}
	rows, read = claimReads("one-open")
	if len(rows) != leads/mailboxes {
		t.Fatalf("claimed %d with one mailbox open, want %d", len(rows), batch)
	}
	for _, r := range rows {
		if r.MailboxID != rows[0].MailboxID {
			t.Fatalf("claimed a row of paused mailbox %d", r.MailboxID)
		}
	}
	if perMailbox := leads / mailboxes; read > perMailbox+10*batch {
		t.Errorf("with one mailbox open a claim of %d read %d enrollment and lead rows, want at most %d (its own %d rows and the batch's; the paused mailboxes' older rows are not its to read)",
			batch, read, perMailbox+10*batch, perMailbox)
	}
}

// Rows claimed are joined back to enrollments to be updated. When they
// were the table's newest (new enrollments' first steps due before older
// ones' follow-ups), the planner merge-joined them with the whole primary
// key: a claim of 500 read all 40,000 enrollments (issue 30). The claim
// reaches its rows by key.
func TestEmailClaimJoinsItsRowsByKey(t *testing.T) {
	t.Parallel()
	db := storetest.New(t)
	const mailboxes, leads, batch = 1000, 40000, 500
	// The newer the lead, the older its due time.
	seedDueBacklog(t, db, mailboxes, leads, `now() - interval '1 hour' - l.id * interval '1 ms'`)
	if _, err := db.Pool.Exec(context.Background(), `ANALYZE enrollments`); err != nil {
		t.Fatal(err)
	}
	rows, read := claimCountingReads(t, db, batch, "newest-first")
	if len(rows) != batch {
		t.Fatalf("claimed %d, want %d", len(rows), batch)
	}
	if read > 10*batch {
		t.Errorf("a claim of %d of the newest enrollments read %d enrollment and lead rows, want at most %d (the table is %d: a claim must not read it)",
			batch, read, 10*batch, leads)
	}
}

// claimCountingReads claims up to batch rows for tickID and returns them
// with the enrollment and lead rows the claim read.
func claimCountingReads(t *testing.T, db *storetest.DB, batch int, tickID string) (rows []store.ClaimedEnrollment, read int) {
	t.Helper()
	counter := storetest.CountSeqScans(t, db.Pool, db.URL)
	counter.Reset(t)
	claim, err := store.ClaimEnrollments(context.Background(), counter.Pool, store.EmailClaimRequest{Batch: batch, Lease: time.Minute, TickID: tickID})
	if err != nil {
		t.Fatal(err)
	}
	for table, r := range counter.Reads(t, "enrollments", "leads") {
		t.Logf("%s: %s: %d rows by sequential scans, %d fetched by index scans", tickID, table, r.Seq, r.Index)
		read += r.Seq + r.Index
	}
	return claim.Rows, read
}

// seedDueBacklog loads a campaign over mailboxes with leads enrolled, lead
// i on mailbox i modulo the mailboxes, due at the SQL expression due (of
// l, the lead).
func seedDueBacklog(t *testing.T, db *storetest.DB, mailboxes, leads int, due string) {
	t.Helper()
	seedClaimBacklog(t, db, mailboxes, leads, fmt.Sprintf(
		`INSERT INTO enrollments (campaign_id, lead_id, workspace_id, mailbox_id, next_send_at)
		 SELECT c.id, l.id, l.workspace_id, m.id, %s
		 FROM campaigns c, leads l
		 JOIN mailboxes m ON m.id = (SELECT min(id) FROM mailboxes) + l.id %% %d`, due, mailboxes))
}
