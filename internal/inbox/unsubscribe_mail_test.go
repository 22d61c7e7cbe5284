package inbox

import (
	"context"
	"fmt"
	"testing"

	"github.com/rindactl/rindactl/internal/unsubscribe"
)

// unsubscribeMail is what a mail client sends for the List-Unsubscribe
// mailto: URL of lead n's message, with subject.
func (f *inboxFixture) unsubscribeMail(n int, subject string) {
	f.t.Helper()
	_, mb := f.sent(n)
	raw := fmt.Sprintf("From: Lead%d <lead%d@example.test>\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <unsub-%d-%s@example.test>\r\nDate: Fri, 05 Jun 2026 05:40:00 +0000\r\n\r\n\r\n",
		n, n, mb, subject, n, subject[len(subject)-6:])
	if err := f.imap.Deliver(mb, []byte(raw)); err != nil {
		f.t.Fatal(err)
	}
}

// token is the unsubscribe token of lead n's enrollment, as its message carried it.
func (f *inboxFixture) token(n int) string {
	f.t.Helper()
	var id int64
	var key []byte
	err := f.pool.QueryRow(context.Background(), `SELECT e.id, k.key FROM enrollments e JOIN leads l ON l.id = e.lead_id
		JOIN unsubscribe_keys k ON k.workspace_id = e.workspace_id WHERE l.first_name = $1`, fmt.Sprintf("Lead%d", n)).Scan(&id, &key)
	if err != nil {
		f.t.Fatal(err)
	}
	return unsubscribe.Sign(key, id)
}

// Issue 25: a mail sent through List-Unsubscribe's mailto: URL ends the
// sequence as unsubscribed and suppresses the address when inbox tick
// reads it; a repeated or forged one changes nothing. Before, such a mail
// was "other" and nothing happened.
func TestInboxTickUnsubscribesByMail(t *testing.T) {
	t.Parallel()
	f := newInboxFixture(t)
	f.unsubscribeMail(1, "unsubscribe "+f.token(1))
	f.unsubscribeMail(1, "Re: unsubscribe "+f.token(1))                        // sent twice
	f.unsubscribeMail(2, "unsubscribe "+unsubscribe.Sign(make([]byte, 32), 1)) // forged
	rep := f.tick(TickOptions{})
	if rep.Outcomes[OutcomeUnsubscribed] != 1 || rep.Outcomes[OutcomeAlreadyEnded] != 1 || rep.Outcomes[OutcomeUnmatched] != 1 || rep.Outcomes[OutcomeSuppressed] != 1 {
		t.Errorf("report = %+v", rep.Outcomes)
	}
	for n, want := range map[int]string{1: "unsubscribed", 2: "active", 3: "active"} {
		if got := f.status(n); got != want {
			t.Errorf("lead %d: enrollment %s, want %s", n, got, want)
		}
	}
	if got := f.str(`SELECT string_agg(email || '=' || reason, ',') FROM suppressions`); got != "lead1@example.test=unsubscribed" {
		t.Errorf("suppressions = %s", got)
	}
	if got := f.str(`SELECT string_agg(via, ',') FROM unsubscribes`); got != "mailto" {
		t.Errorf("token uses = %s", got)
	}
}
