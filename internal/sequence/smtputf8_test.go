package sequence

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rindactl/rindactl/internal/sequence/smtptest"
	"github.com/rindactl/rindactl/internal/store"
)

// Issue 25, finding 6: a lead whose local part is UTF-8 is sent only
// through a server that offers SMTPUTF8; elsewhere the lead fails with a
// reason that says so, and the mailbox goes on with its other leads.
func TestUTF8LocalPartNeedsSMTPUTF8(t *testing.T) {
	t.Parallel()
	for _, offers := range []bool{false, true} {
		f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1, steps: oneStep})
		srv := smtptest.New(t, smtptest.Options{SMTPUTF8: offers})
		f.pointMailbox("sdr01@acme.test", srv.URL(""))
		f.exec(`UPDATE leads SET email = 'zoë@example.test' WHERE external_id = 'ext-1'`)
		rep := f.tick(TickOptions{})
		var to []string
		for _, m := range srv.Messages() {
			to = append(to, m.To...)
		}
		if !offers {
			if rep.Sent != 1 || rep.Outcomes[OutcomeRejected] != 1 || strings.Contains(strings.Join(to, ","), "zoë") {
				t.Errorf("without SMTPUTF8: tick %+v, delivered to %v; want the UTF-8 lead rejected, the other sent", rep, to)
			}
			if n := f.count(`SELECT count(*) FROM enrollments WHERE status = 'failed' AND last_error LIKE '%SMTPUTF8%'`); n != 1 {
				t.Errorf("%d enrollments failed naming SMTPUTF8, want 1", n)
			}
			if srv.Connections() != 1 {
				t.Errorf("%d connections, want 1: a refusal before MAIL keeps the connection", srv.Connections())
			}
			continue
		}
		if rep.Sent != 2 || !strings.Contains(strings.Join(to, ","), "zoë@example.test") {
			t.Errorf("with SMTPUTF8: tick %+v, delivered to %v; want both sent", rep, to)
		}
	}
}

// Issue 25, finding 6: a bounce naming any spelling finds the send to the
// lead stored in another, and a suppression written in one spelling covers
// the lead in every other.
func TestSuppressionCoversEverySpelling(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{leads: 2, mailboxes: 1})
	f.exec(`UPDATE leads SET email = 'ana@xn--mnchen-3ya.example' WHERE external_id = 'ext-1'`)
	if rep := f.tick(TickOptions{}); rep.Sent != 2 {
		t.Fatalf("step 1: %+v, want both sent", rep)
	}
	var ws, mailbox int64
	if err := f.pool.QueryRow(context.Background(), `SELECT workspace_id, mailbox_id FROM enrollments LIMIT 1`).Scan(&ws, &mailbox); err != nil {
		t.Fatal(err)
	}
	sends, err := store.InboxSendsToRecipients(context.Background(), f.pool, mailbox, []string{" ANA@münchen.example"}, time.Now().Add(-time.Hour))
	if err != nil || len(sends) != 1 {
		t.Errorf("a bounce for ANA@münchen.example matched %v (%v), want the send to ana", sends, err)
	}
	if _, err := store.Suppress(context.Background(), f.pool, []store.Suppression{{WorkspaceID: ws, Email: "Ana@MÜNCHEN.example", Reason: "unsubscribed"}}); err != nil {
		t.Fatal(err)
	}
	f.due()
	rep := f.tick(TickOptions{})
	if rep.Sent != 1 || rep.Outcomes[OutcomeSuppressed] != 1 {
		t.Errorf("step 2: %+v, want ana suppressed and the other lead sent", rep)
	}
	mailedAna := 0
	for _, m := range f.srv.Messages() {
		if strings.Contains(m.To[0], "mnchen") {
			mailedAna++
		}
	}
	if mailedAna != 1 {
		t.Errorf("ana got %d messages, want only step 1 (her suppression stops step 2)", mailedAna)
	}
}
